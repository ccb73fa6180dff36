# The KVM probe guest of hack/kind/kubevirt.sh: a 254-byte boot sector that does what every x86-64
# guest OS does first, reporting each stage on COM1 (port 0x3f8):
#   R  real mode (from the BIOS)   L  64-bit long mode (paging, GDT)
#   S  an SSE instruction          I  an interrupt through an IDT
# then the marker VMBENCH-GUEST-RAN, and resets the machine (keyboard controller), which QEMU's
# -no-reboot turns into an exit. A paravirtual /dev/kvm (kvm_pvm) runs such a guest through KVM's
# instruction emulator, which stops at the SSE instruction with "KVM internal error. Suberror: 1",
# as it stops real guests; real KVM and TCG run it to the end in about a second.
# The script holds the assembled bytes as hex; after a change, regenerate them with
#   as --32 -o g.o kvm-probe-guest.S && objcopy -O binary -j .text g.o g.bin && xxd -p g.bin | tr -d '\n'
.intel_syntax noprefix
.code16
  cli
  xor ax, ax
  mov ds, ax
  mov es, ax
  mov ss, ax
  mov sp, 0x7c00
  mov dx, 0x3f8
  mov al, 'R'
  out dx, al
  # Identity-map the first 2 MiB: PML4 at 0x1000 -> PDPT at 0x2000 -> PD at 0x3000 (one 2 MiB
  # page); 0x1000-0x4fff is cleared first, which also empties the IDT at 0x4000.
  mov di, 0x1000
  mov cx, 0x2000
  xor ax, ax
  rep stosw
  mov word ptr [0x1000], 0x2003
  mov word ptr [0x2000], 0x3003
  mov word ptr [0x3000], 0x0083
  lgdt [0x7c00 + gdt_desc]
  mov eax, cr4
  or eax, 0x220                 # PAE, OSFXSR (SSE allowed)
  mov cr4, eax
  mov eax, 0x1000
  mov cr3, eax
  mov ecx, 0xC0000080           # EFER.LME
  rdmsr
  or eax, 0x100
  wrmsr
  mov eax, cr0
  or eax, 0x80000003            # PG, MP, PE: straight from real mode to long mode
  and eax, 0xfffffffb           # no x87 emulation (EM), so SSE runs
  mov cr0, eax
  ljmp 0x08, 0x7c00 + long_mode
.code64
long_mode:
  mov dx, 0x3f8                 # rdmsr/wrmsr used edx
  mov al, 'L'
  out dx, al
  pxor xmm0, xmm0
  mov al, 'S'
  out dx, al
  # IDT gate 0x30 (at 0x4000 + 0x30 * 16): 64-bit interrupt gate to handler, code selector 0x08.
  lea rax, [rip + handler]
  mov rdi, 0x4300
  mov word ptr [rdi], ax
  mov word ptr [rdi+2], 0x08
  mov word ptr [rdi+4], 0x8e00
  shr rax, 16
  mov word ptr [rdi+6], ax
  lidt [rip + idt_desc]
  mov rsp, 0x7000
  int 0x30
  lea rsi, [rip + msg]
1:
  lodsb
  test al, al
  jz 2f
  out dx, al
  jmp 1b
2:
  mov al, 0xfe                  # pulse the reset line
  out 0x64, al
3:
  hlt
  jmp 3b
handler:
  mov al, 'I'
  out dx, al
  iretq
gdt:
  .quad 0
  .quad 0x00209A0000000000      # 64-bit code segment
gdt_desc:
  .word gdt_desc - gdt - 1
  .long 0x7c00 + gdt
idt_desc:
  .word 0xfff
  .quad 0x4000
msg:
  .asciz "VMBENCH-GUEST-RAN\n"
