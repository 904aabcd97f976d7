; hilbridge boot BIOS: the smallest BIOS that starts a cartridge.
; The 8048 enters the BIOS at 000h (reset), 003h (external interrupt) and 007h (timer interrupt);
; like the real BIOS, each entry continues in the cartridge: 0400h, 0402h and 0404h.
; It offers no BIOS routines, so only self-contained cartridges run on it.

        cpu     8048
        org     000h
reset:  jmp     0400h           ; cartridge start
        nop
irq:    jmp     0402h           ; cartridge interrupt vector (the VDC's /INT)
        nop
        nop
timer:  jmp     0404h           ; cartridge timer/counter vector

        org     3F0h
        db      "HILBRIDGE BOOT", 00h, 01h   ; tag and version
