#!/bin/sh
# An askpass program as ssh runs one (CLIPassphraseProgramTests): the prompt is its one argument,
# appended to $FAKE_ASKPASS_LOG; the answer of its Nth run is line N of $FAKE_ASKPASS_ANSWERS,
# printed with a newline, or exit status 1 (a cancel, as ssh-askpass reports one) for "CANCEL".
printf '%s\n' "$1" >> "$FAKE_ASKPASS_LOG"
n=$(wc -l < "$FAKE_ASKPASS_LOG")
answer=$(sed -n "${n}p" "$FAKE_ASKPASS_ANSWERS")
[ "$answer" = CANCEL ] && exit 1
printf '%s\n' "$answer"
