	.if 1
	nop
	.elseif 2 > 1 && 3
	fnop
	.else
	.error "x"
	.endif
	.ifdef K
	.endif
	.ifc "a", a
	.endif
	.ifnb x
	.warning "w"
	.endif
