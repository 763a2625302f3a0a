.macro m, r n=1 s="" t:req v:vararg
.ifnc \s, x
	add \r, \r, \n
.endif
L\@_\t:
\v
.endm
	m $m1 2 "" a nop
	m $m2 1 + 2 "x" b fnop
	m $m3 3 "" 4x16bit
	m r=$m4, t=c
