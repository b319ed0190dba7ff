#include "textflag.h"

// func pairMaskAVX2(s *byte, n, d int, a, b byte) (off int, mask uint32)
//
// For off = 0, 32, ... while off+32 <= n: compares the 32 bytes at s+off
// with a and the 32 at s+off+d with b, and returns at the first block
// where some place has both; else off is where the blocks ended and the
// mask is 0.
TEXT ·pairMaskAVX2(SB), NOSPLIT, $0-44
	MOVQ s+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ d+16(FP), DX
	MOVBLZX a+24(FP), AX
	MOVBLZX b+25(FP), BX
	MOVQ AX, X0
	VPBROADCASTB X0, Y0
	MOVQ BX, X1
	VPBROADCASTB X1, Y1
	LEAQ (SI)(DX*1), R9 // where the b bytes are read
	XORQ DI, DI

loop:
	LEAQ 32(DI), R8
	CMPQ R8, CX
	JA   done
	VMOVDQU (SI)(DI*1), Y2
	VMOVDQU (R9)(DI*1), Y3
	VPCMPEQB Y0, Y2, Y2
	VPCMPEQB Y1, Y3, Y3
	VPAND Y2, Y3, Y2
	VPMOVMSKB Y2, R10
	TESTL R10, R10
	JNZ  found
	MOVQ R8, DI
	JMP  loop

found:
	VZEROUPPER
	MOVQ DI, off+32(FP)
	MOVL R10, mask+40(FP)
	RET

done:
	VZEROUPPER
	MOVQ DI, off+32(FP)
	MOVL $0, mask+40(FP)
	RET
