	.allow_optimizations
	nop
	{ rpt $m0, (2f-1f)/8-1 ; fnop }
1:	{ fnop ; ld32 $m1, $m2, 4 }
2:
	ldconst $m1, 0x12345678
	movnz $m1, $m2, $m3
	swap16 $a0, $a1
	sub $m0, $m0, 4
	zero $a2:3
	mov $m0, $a1
	f32v2mul $a2:3, $a5:BL, $a2:3
	setzi $a1, -1.0h
	ld32 $a0, $m4, $azero, 0
	.extern f
	strap
