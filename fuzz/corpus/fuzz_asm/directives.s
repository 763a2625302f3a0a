# 10 "orig.S" 1
	.section .text.f(x), "ax"
	.globl g, @function
	.type g @function
g:
	uput CSR_W_FP_CTL__INDEX & CSR_W_WSR__CTXTID_M1__MASK, $a7
	.size g, . - g
	.size nope, . - g
	.allow_invalid_repeat
	rpt $m0, 0
