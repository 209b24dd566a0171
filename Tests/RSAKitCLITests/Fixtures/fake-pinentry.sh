#!/bin/sh
# A scripted Assuan peer standing in for pinentry (CLIPassphraseProgramTests): it greets, answers
# OK to every command, and answers the Nth GETPIN with line N of $FAKE_PINENTRY_ANSWERS, sent
# as a D line as it stands (so "%25" there is a "%" in the passphrase), or with pinentry's own
# cancel error for a line "CANCEL". Every command it reads is appended to $FAKE_PINENTRY_LOG.
n=0
echo "OK Pleased to meet you"
while IFS= read -r line; do
    printf '%s\n' "$line" >> "$FAKE_PINENTRY_LOG"
    case "$line" in
        GETPIN)
            n=$((n + 1))
            answer=$(sed -n "${n}p" "$FAKE_PINENTRY_ANSWERS")
            if [ "$answer" = CANCEL ]; then
                echo "ERR 83886179 Operation cancelled <Pinentry>"
            else
                echo "# a comment line, which a client skips"
                echo "D $answer"
                echo "OK"
            fi ;;
        BYE) echo "OK closing connection"; exit 0 ;;
        *) echo "OK" ;;
    esac
done
