/*
 * rsakit_mont_adx_x86_64.S - the hot loops of the radix-2^64 Montgomery kernel on
 * mulx/adcx/adox (BMI2 + ADX): the almost-Montgomery product and the dedicated squaring
 * (each a schoolbook product into a double-width scratch followed, in the same call, by the
 * word-by-word Montgomery reduction), and the masked scan of the 32-entry window table.
 * Assembly so that a debug build runs them at full speed and no -m flag is needed; the C
 * side (rsakit_mont_adx.c) calls them only after the CPU check.
 *
 * Every loop count depends only on W (the public padded limb count, a multiple of 4 from 4
 * to 64); no branch or address depends on the numbers. The only flag-dependent result
 * is the reduction's final carry, turned into a mask with sbb (no branch, no cmov, which
 * memcheck would report on a secret).
 *
 * The row primitive adds v * U[0 .. 4k-1] into T with two carry chains: adcx carries the
 * low halves of the products (CF), adox the high halves shifted one word up (OF). Loop
 * control uses lea and jrcxz, which leave both flags alone.
 */
#if defined(__x86_64__) && defined(__ELF__)

    .text

/* Offsets in struct rk_adx_kp (rsakit_mont_adx_internal.h). */
#define KP_N     0
#define KP_N0INV 8
#define KP_W     16

/*
 * One row, T[0 .. 4 rcx - 1] += rdx * U[0 .. 4 rcx - 1].
 * In: rdx = v, rsi = U, rdi = T, rcx = blocks of 4 limbs (>= 1); the previous high word is
 * read from r8 at step 0 and r9 at step 1 (both 0 on entry), CF = OF = 0. Entering at step
 * s (label _s1.._s3) with rsi and rdi moved back by s words runs a row of 4 rcx - s limbs.
 * Out: rsi, rdi past the row; r8 = high word of the last product; CF and OF pending (the
 * caller folds them into r8, which is then the word above the row).
 * Clobbers rax, rcx, r9.
 */
.macro ROWBODY lbl
\lbl\()_s0:
    mulx    (%rsi), %rax, %r9
    adcx    (%rdi), %rax
    adox    %r8, %rax
    mov     %rax, (%rdi)
\lbl\()_s1:
    mulx    8(%rsi), %rax, %r8
    adcx    8(%rdi), %rax
    adox    %r9, %rax
    mov     %rax, 8(%rdi)
\lbl\()_s2:
    mulx    16(%rsi), %rax, %r9
    adcx    16(%rdi), %rax
    adox    %r8, %rax
    mov     %rax, 16(%rdi)
\lbl\()_s3:
    mulx    24(%rsi), %rax, %r8
    adcx    24(%rdi), %rax
    adox    %r9, %rax
    mov     %rax, 24(%rdi)
    lea     32(%rsi), %rsi
    lea     32(%rdi), %rdi
    lea     -1(%rcx), %rcx
    jrcxz   \lbl\()_end
    jmp     \lbl\()_s0
\lbl\()_end:
    mov     $0, %eax            /* mov keeps the flags */
    adcx    %rax, %r8
    adox    %rax, %r8
.endm

/*
 * Montgomery reduction of the double-width T (2W words at r14) into r (W words at r12):
 * r = (T + M n) / R with M chosen word by word (m_i = t_i * n0inv), minus n when that sum
 * carries out of W words (masked), so that r < R whenever T < R^2. Row i leaves t_i = 0
 * and stores its carry word there; the carries are added to the upper half at the end.
 * In: r12 = r, r13 = struct rk_adx_kp *, r14 = T, r15 = W. T is destroyed.
 * Clobbers rax, rbx, rcx, rdx, rsi, rdi, rbp, r8-r11, flags.
 */
    .p2align 5
    .type   rk_adx_redc, @function
rk_adx_redc:
    mov     KP_N(%r13), %r11
    mov     KP_N0INV(%r13), %r10
    mov     %r14, %rbp
    mov     %r15, %rbx
.Lr_row:
    mov     (%rbp), %rdx
    imul    %r10, %rdx
    mov     %r11, %rsi
    mov     %rbp, %rdi
    mov     %r15, %rcx
    shr     $2, %rcx
    xor     %r8d, %r8d          /* also clears CF and OF */
    ROWBODY .Lr
    mov     %r8, (%rbp)         /* carry word of row i, at weight i + W */
    lea     8(%rbp), %rbp
    dec     %rbx
    jnz     .Lr_row
    /* r = T[W .. 2W-1] + T[0 .. W-1] (the carry words) */
    lea     (%r14,%r15,8), %rsi
    mov     %r14, %rdi
    mov     %r12, %r9
    mov     %r15, %rcx
    xor     %eax, %eax
.Lr_add:
    mov     (%rsi), %rax
    adc     (%rdi), %rax
    mov     %rax, (%r9)
    lea     8(%rsi), %rsi
    lea     8(%rdi), %rdi
    lea     8(%r9), %r9
    dec     %rcx                /* dec keeps CF */
    jnz     .Lr_add
    sbb     %rax, %rax          /* all ones when the sum carried out */
    mov     %r11, %rsi
    mov     %r14, %rdi
    mov     %r15, %rcx
.Lr_mask:
    mov     (%rsi), %rdx
    and     %rax, %rdx
    mov     %rdx, (%rdi)
    lea     8(%rsi), %rsi
    lea     8(%rdi), %rdi
    dec     %rcx
    jnz     .Lr_mask
    mov     %r14, %rsi
    mov     %r12, %rdi
    mov     %r15, %rcx
    clc
.Lr_sub:
    mov     (%rdi), %rdx
    sbb     (%rsi), %rdx
    mov     %rdx, (%rdi)
    lea     8(%rsi), %rsi
    lea     8(%rdi), %rdi
    dec     %rcx
    jnz     .Lr_sub
    ret
    .size   rk_adx_redc, .-rk_adx_redc

/*
 * void rk_adx_mul(uint64_t *r, const uint64_t *a, const uint64_t *b,
 *                 const struct rk_adx_kp *kp, uint64_t *t)
 * r = a b / R mod n as an almost-Montgomery value (< R when a, b < R); all W words.
 * t: 2W words of scratch, left holding intermediate values (the caller zeroes it). r may
 * alias a or b.
 */
    .p2align 5
    .globl  rk_adx_mul
    .hidden rk_adx_mul
    .type   rk_adx_mul, @function
rk_adx_mul:
    push    %rbx
    push    %rbp
    push    %r12
    push    %r13
    push    %r14
    push    %r15
    mov     %rdi, %r12
    mov     %rcx, %r13
    mov     %r8, %r14
    mov     KP_W(%rcx), %r15
    mov     %rsi, %r10
    mov     %rdx, %r11
    xor     %eax, %eax
    mov     %r15, %rcx
    mov     %r14, %rdi
.Lm_zero:
    mov     %rax, (%rdi)
    lea     8(%rdi), %rdi
    dec     %rcx
    jnz     .Lm_zero
    mov     %r14, %rbp
    mov     %r15, %rbx
.Lm_row:
    mov     (%r11), %rdx
    mov     %r10, %rsi
    mov     %rbp, %rdi
    mov     %r15, %rcx
    shr     $2, %rcx
    xor     %r8d, %r8d
    ROWBODY .Lm
    mov     %r8, (%rdi)         /* T[i + W], not written before */
    lea     8(%r11), %r11
    lea     8(%rbp), %rbp
    dec     %rbx
    jnz     .Lm_row
    call    rk_adx_redc
    pop     %r15
    pop     %r14
    pop     %r13
    pop     %r12
    pop     %rbp
    pop     %rbx
    ret
    .size   rk_adx_mul, .-rk_adx_mul

/*
 * void rk_adx_sqr(uint64_t *r, const uint64_t *a, const struct rk_adx_kp *kp, uint64_t *t)
 * r = a^2 / R mod n as an almost-Montgomery value (< R when a < R). The square is the
 * triangle of cross products a_i a_j (i < j), doubled, plus the diagonal a_i^2:
 * W (W - 1) / 2 + W products instead of W^2. r may alias a; t: 2W words of scratch.
 */
    .p2align 5
    .globl  rk_adx_sqr
    .hidden rk_adx_sqr
    .type   rk_adx_sqr, @function
rk_adx_sqr:
    push    %rbx
    push    %rbp
    push    %r12
    push    %r13
    push    %r14
    push    %r15
    mov     %rdi, %r12
    mov     %rdx, %r13
    mov     %rcx, %r14
    mov     KP_W(%rdx), %r15
    mov     %rsi, %r10
    xor     %eax, %eax
    lea     (%r15,%r15), %rcx
    mov     %r14, %rdi
.Ls_zero:
    mov     %rax, (%rdi)
    lea     8(%rdi), %rdi
    dec     %rcx
    jnz     .Ls_zero
    /* Row i (0 <= i <= W-2): T[2i+1 .. i+W-1] += a_i a[i+1 .. W-1], carry word to T[i+W].
     * Its length L = W-1-i is entered at step k = -L mod 4 of the 4-word body. */
    xor     %ebx, %ebx
.Ls_row:
    mov     %r15, %rax
    sub     %rbx, %rax
    dec     %rax                /* L */
    mov     %rax, %r11
    neg     %r11
    and     $3, %r11            /* k */
    lea     (%rax,%r11), %rcx
    shr     $2, %rcx            /* blocks */
    mov     (%r10,%rbx,8), %rdx
    lea     8(%r10,%rbx,8), %rsi
    lea     (%rbx,%rbx), %rdi
    lea     8(%r14,%rdi,8), %rdi
    lea     (,%r11,8), %rax
    sub     %rax, %rsi
    sub     %rax, %rdi
    cmp     $1, %r11            /* k is public (a function of i and W) */
    je      .Ls_e1
    cmp     $2, %r11
    je      .Ls_e2
    cmp     $3, %r11
    je      .Ls_e3
    xor     %r8d, %r8d
    xor     %r9d, %r9d
    jmp     .Lq_s0
.Ls_e1:
    xor     %r8d, %r8d
    xor     %r9d, %r9d
    jmp     .Lq_s1
.Ls_e2:
    xor     %r8d, %r8d
    xor     %r9d, %r9d
    jmp     .Lq_s2
.Ls_e3:
    xor     %r8d, %r8d
    xor     %r9d, %r9d
    jmp     .Lq_s3
    ROWBODY .Lq
    mov     %r8, (%rdi)         /* T[i + W] */
    inc     %rbx
    lea     -1(%r15), %rax
    cmp     %rax, %rbx
    jb      .Ls_row
    /* T = 2 T + sum a_i^2 2^(128 i): doubling on the OF chain, squares on the CF chain. */
    mov     %r10, %rsi
    mov     %r14, %rdi
    mov     %r15, %rcx
    xor     %eax, %eax
.Ls_diag:
    mov     (%rsi), %rdx
    mulx    %rdx, %rax, %rbx
    mov     (%rdi), %r8
    mov     8(%rdi), %r9
    adox    %r8, %r8
    adox    %r9, %r9
    adcx    %rax, %r8
    adcx    %rbx, %r9
    mov     %r8, (%rdi)
    mov     %r9, 8(%rdi)
    lea     8(%rsi), %rsi
    lea     16(%rdi), %rdi
    lea     -1(%rcx), %rcx
    jrcxz   .Ls_diag_end
    jmp     .Ls_diag
.Ls_diag_end:
    call    rk_adx_redc
    pop     %r15
    pop     %r14
    pop     %r13
    pop     %r12
    pop     %rbp
    pop     %rbx
    ret
    .size   rk_adx_sqr, .-rk_adx_sqr

/*
 * void rk_adx_select(uint64_t *out, const uint64_t *table, uint64_t w, uint64_t idx)
 * out[0 .. w-1] = entry idx of a table of 32 entries of w words (w a multiple of 4), by
 * reading every entry and or-ing it in under a mask that is all ones for entry idx only
 * (masks from arithmetic on idx, no comparison). The masks live in a stack area that is
 * zeroed before return.
 */
    .p2align 5
    .globl  rk_adx_select
    .hidden rk_adx_select
    .type   rk_adx_select, @function
rk_adx_select:
    push    %rbp
    mov     %rsp, %rbp
    sub     $512, %rsp
    and     $-16, %rsp
    xor     %r8d, %r8d
.Lsel_mask:
    mov     %r8, %rax
    xor     %rcx, %rax          /* 0 exactly for entry idx */
    mov     %rax, %r9
    neg     %r9
    or      %r9, %rax
    shr     $63, %rax           /* 0 for entry idx, else 1 */
    sub     $1, %rax            /* all ones for entry idx, else 0 */
    mov     %r8, %r9
    shl     $4, %r9
    mov     %rax, (%rsp,%r9)
    mov     %rax, 8(%rsp,%r9)
    inc     %r8
    cmp     $32, %r8
    jb      .Lsel_mask
    lea     (,%rdx,8), %r10     /* entry stride in bytes */
    mov     %rdx, %r11
    shr     $2, %r11            /* chunks of 4 words */
.Lsel_chunk:
    pxor    %xmm0, %xmm0
    pxor    %xmm1, %xmm1
    mov     %rsi, %rax
    xor     %r8d, %r8d
.Lsel_entry:
    movdqa  (%rsp,%r8), %xmm2
    movdqu  (%rax), %xmm3
    movdqu  16(%rax), %xmm4
    pand    %xmm2, %xmm3
    pand    %xmm2, %xmm4
    por     %xmm3, %xmm0
    por     %xmm4, %xmm1
    add     %r10, %rax
    add     $16, %r8
    cmp     $512, %r8
    jb      .Lsel_entry
    movdqu  %xmm0, (%rdi)
    movdqu  %xmm1, 16(%rdi)
    add     $32, %rsi
    add     $32, %rdi
    dec     %r11
    jnz     .Lsel_chunk
    pxor    %xmm0, %xmm0
    pxor    %xmm1, %xmm1
    pxor    %xmm2, %xmm2
    pxor    %xmm3, %xmm3
    pxor    %xmm4, %xmm4
    xor     %r8d, %r8d
.Lsel_wipe:
    movdqa  %xmm0, (%rsp,%r8)
    add     $16, %r8
    cmp     $512, %r8
    jb      .Lsel_wipe
    mov     %rbp, %rsp
    pop     %rbp
    ret
    .size   rk_adx_select, .-rk_adx_select

#endif

#if defined(__linux__) && defined(__ELF__)
/* No executable stack: without this note the linker marks the whole binary's stack
 * executable (and lintian flags the .deb). */
    .section .note.GNU-stack,"",%progbits
#endif
