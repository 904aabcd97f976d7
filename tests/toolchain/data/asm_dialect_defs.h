; definitions for asm_dialect.a48 (an original test program for hilbridge's assembler)
	ifndef	dialect_defs
dialect_defs	equ	1
vdc_ctrl	equ	0A0h
ram_base	equ	020h
ram_count	equ	ram_base+1
colours		equ	%0110		; Motorola binary (RELAXED ON)
	endif
