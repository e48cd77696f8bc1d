//go:build !purego

#include "textflag.h"

// The three nibble tables of the lookup algorithm (Keiser and Lemire,
// "Validating UTF-8 in less than one instruction per byte", 2021). Each
// byte holds error flags; a byte pair is wrong when the flags of the first
// byte's high nibble, its low nibble and the second byte's high nibble
// share a bit. Flags: 0x01 too short, 0x02 too long, 0x04 overlong 3,
// 0x08 too large, 0x10 surrogate, 0x20 overlong 2, 0x40 too large 1000 or
// overlong 4, 0x80 two continuations.
DATA firstHigh<>+0(SB)/8, $0x0202020202020202
DATA firstHigh<>+8(SB)/8, $0x4915012180808080
GLOBL firstHigh<>(SB), RODATA|NOPTR, $16

DATA firstLow<>+0(SB)/8, $0xcbcbcb8b8383a3e7
DATA firstLow<>+8(SB)/8, $0xcbcbdbcbcbcbcbcb
GLOBL firstLow<>(SB), RODATA|NOPTR, $16

DATA secondHigh<>+0(SB)/8, $0x0101010101010101
DATA secondHigh<>+8(SB)/8, $0x01010101babaaee6
GLOBL secondHigh<>(SB), RODATA|NOPTR, $16

DATA nibble<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibble<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibble<>(SB), RODATA|NOPTR, $16

// A byte at or above 0xe0 (0xf0) less 0x60 (0x70) keeps its top bit: it
// is a lead whose third (fourth) byte must be a continuation.
DATA third<>+0(SB)/8, $0x6060606060606060
DATA third<>+8(SB)/8, $0x6060606060606060
GLOBL third<>(SB), RODATA|NOPTR, $16

DATA fourth<>+0(SB)/8, $0x7070707070707070
DATA fourth<>+8(SB)/8, $0x7070707070707070
GLOBL fourth<>(SB), RODATA|NOPTR, $16

DATA top<>+0(SB)/8, $0x8080808080808080
DATA top<>+8(SB)/8, $0x8080808080808080
GLOBL top<>(SB), RODATA|NOPTR, $16

// func validBlocksAVX2(p *byte, n int) bool
//
// n is a positive multiple of 32. A sequence cut off at p+n is not an
// error here; the caller checks the end.
TEXT ·validBlocksAVX2(SB), NOSPLIT, $0-17
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTI128 firstHigh<>(SB), Y12
	VBROADCASTI128 firstLow<>(SB), Y13
	VBROADCASTI128 secondHigh<>(SB), Y14
	VBROADCASTI128 nibble<>(SB), Y15
	VBROADCASTI128 third<>(SB), Y10
	VBROADCASTI128 fourth<>(SB), Y11
	VBROADCASTI128 top<>(SB), Y8
	VPXOR Y1, Y1, Y1 // the previous block; none is ASCII
	VPXOR Y9, Y9, Y9 // the error flags so far

loop:
	VMOVDQU (SI), Y0
	// After an ASCII block, an ASCII block cannot be wrong.
	VPOR      Y0, Y1, Y2
	VPMOVMSKB Y2, AX
	TESTL     AX, AX
	JZ        next

	// Y2 = previous block's high lane, this block's low lane, from which
	// VPALIGNR takes the bytes 1, 2 and 3 before each byte.
	VPERM2I128 $0x21, Y0, Y1, Y2
	VPALIGNR   $15, Y2, Y0, Y3
	VPALIGNR   $14, Y2, Y0, Y4
	VPALIGNR   $13, Y2, Y0, Y5

	VPSRLW  $4, Y3, Y6
	VPAND   Y15, Y6, Y6
	VPSHUFB Y6, Y12, Y6
	VPAND   Y15, Y3, Y7
	VPSHUFB Y7, Y13, Y7
	VPAND   Y7, Y6, Y6
	VPSRLW  $4, Y0, Y7
	VPAND   Y15, Y7, Y7
	VPSHUFB Y7, Y14, Y7
	VPAND   Y7, Y6, Y6

	VPSUBUSB Y10, Y4, Y4
	VPSUBUSB Y11, Y5, Y5
	VPOR     Y5, Y4, Y4
	VPAND    Y8, Y4, Y4
	VPXOR    Y4, Y6, Y6
	VPOR     Y6, Y9, Y9

next:
	VMOVDQA Y0, Y1
	ADDQ    $32, SI
	SUBQ    $32, CX
	JNZ     loop

	VPTEST  Y9, Y9
	SETEQ   ret+16(FP)
	VZEROUPPER
	RET

// func validBlocksAVX512(p *byte, n int) bool
//
// validBlocksAVX2 on 64-byte blocks, with the three-way operations done by
// VPTERNLOGD. n is a positive multiple of 64.
TEXT ·validBlocksAVX512(SB), NOSPLIT, $0-17
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTI32X4 firstHigh<>(SB), Z12
	VBROADCASTI32X4 firstLow<>(SB), Z13
	VBROADCASTI32X4 secondHigh<>(SB), Z14
	VBROADCASTI32X4 nibble<>(SB), Z15
	VBROADCASTI32X4 third<>(SB), Z10
	VBROADCASTI32X4 fourth<>(SB), Z11
	VBROADCASTI32X4 top<>(SB), Z8
	VPXORQ Z1, Z1, Z1
	VPXORQ Z9, Z9, Z9

loop512:
	VMOVDQU64 (SI), Z0
	VPORQ     Z0, Z1, Z2
	VPMOVB2M  Z2, K1
	KORTESTQ  K1, K1
	JZ        next512

	// Z2 = the previous block's last lane, then this block's first three.
	VALIGNQ  $6, Z1, Z0, Z2
	VPALIGNR $15, Z2, Z0, Z3
	VPALIGNR $14, Z2, Z0, Z4
	VPALIGNR $13, Z2, Z0, Z5

	VPSRLW     $4, Z3, Z6
	VPANDQ     Z15, Z6, Z6
	VPSHUFB    Z6, Z12, Z6
	VPANDQ     Z15, Z3, Z7
	VPSHUFB    Z7, Z13, Z7
	VPSRLW     $4, Z0, Z3
	VPANDQ     Z15, Z3, Z3
	VPSHUFB    Z3, Z14, Z3
	VPTERNLOGQ $0x80, Z3, Z7, Z6 // Z6 &= Z7 & Z3

	VPSUBUSB   Z10, Z4, Z4
	VPSUBUSB   Z11, Z5, Z5
	VPORQ      Z5, Z4, Z4
	VPTERNLOGQ $0x78, Z8, Z4, Z6 // Z6 ^= Z4 & Z8
	VPORQ      Z6, Z9, Z9

next512:
	VMOVDQA64 Z0, Z1
	ADDQ      $64, SI
	SUBQ      $64, CX
	JNZ       loop512

	VPTESTMQ  Z9, Z9, K1
	KORTESTB  K1, K1
	SETEQ     ret+16(FP)
	VZEROUPPER
	RET
