#!/usr/bin/env bash
# Builds the KubeVirt containerDisk vmbench/vm-disk:<tag> (VMBENCH_TAG, default dev): a Debian
# bookworm guest with the runner image's tools and BLAS, the same runner binary, cloud-init (NoCloud),
# DHCP on any ethernet NIC, sshd and a serial console on ttyS0. Only Debian packages and Go go in, and
# nothing is loop-mounted: debootstrap plus apt in a chroot make the root file system, mkfs.ext4 -d
# and mtools fill the partitions, sfdisk and dd join them, qemu-img compresses the disk to qcow2 and a
# FROM scratch image carries it under /disk/. Two cached steps: the root file system with its
# packages (slow: debootstrap and apt) and the disk made from it; each is rebuilt only when its
# inputs change. The qcow2 is also left in bin/vm-disk/, with the guest's package list.
# Usage: hack/images/vm-disk.sh [build]     build the image, or keep it when its inputs are unchanged
#        hack/images/vm-disk.sh boot-test   boot bin/vm-disk/disk.qcow2 under QEMU (TCG) with a NoCloud
#                                           seed shaped like the controller's, and check the guest
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

self="${ROOT}/hack/images/vm-disk.sh"
suite=bookworm
tag=${VMBENCH_TAG:-dev}
image="vmbench/vm-disk:${tag}"
src="${ROOT}/images/vm-disk"
work="${BIN}/.build/vm-disk"
base="${work}/base"
out="${BIN}/vm-disk"
# Disk layout: a FAT partition for syslinux, the kernel and the initrd, then the root file system.
# The root is sized for the storage benchmarks' files (iozone 512M, fio 256m by default); space that
# is never written costs nothing in the qcow2.
root_label=vmbench-root # also named by syslinux.cfg and rootfs/etc/fstab
boot_mib=64
disk_mib=4096

packages() { sed 's/#.*//' "${src}/packages" | xargs; }

# The runner image's apt-get list must be part of the guest's, or VMs and pods would not run the
# same tools.
check_runner_packages() {
  local p missing=()
  for p in $(sed -n '/--no-install-recommends/,/>\/dev\/null/{/--no-install-recommends/d;p}' "${ROOT}/images/runner/Dockerfile" |
    tr -s ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]*$'); do
    packages | tr ' ' '\n' | grep -qxF "${p}" || missing+=("${p}")
  done
  [ "${#missing[@]}" -eq 0 ] || { log "images/vm-disk/packages lacks the runner image's ${missing[*]}"; return 1; }
}

# What maintainer scripts expect in a chroot. Only virtual file systems: debootstrap made the device
# nodes, and a bind-mounted /dev would be emptied by an `rm -rf` of the tree.
chroot_mounts() {
  mount -t proc proc "$1/proc"
  mount -t sysfs sysfs "$1/sys"
}
chroot_umounts() {
  local m
  for m in sys proc; do
    if mountpoint -q "$1/${m}"; then umount "$1/${m}" || umount -l "$1/${m}"; fi
  done
}

# Step 1, the root file system with every package installed. It runs as a process of its own
# (`vm-disk.sh __rootfs`), where set -e holds.
build_rootfs() {
  local mirror=$1
  chroot_umounts "${base}"
  rm -rf --one-file-system "${base}" && mkdir -p "${base}"
  debootstrap --variant=minbase --components=main,non-free "${suite}" "${base}" "${mirror}" \
    >"${work}/debootstrap.log" 2>&1 || { tail -n 20 "${work}/debootstrap.log" >&2; return 1; }
  # dpkg path excludes, the initramfs module list and apt defaults, before any package reads them.
  cp -r --preserve=mode "${src}/base/." "${base}/"
  # The same suites and components as the runner image (iozone3 and netperf are in non-free).
  printf 'deb %s %s main non-free\ndeb %s %s-updates main non-free\ndeb %s-security %s-security main non-free\n' \
    "${mirror}" "${suite}" "${mirror}" "${suite}" "${mirror}" "${suite}" >"${base}/etc/apt/sources.list"
  # No daemon may start inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"${base}/usr/sbin/policy-rc.d" && chmod 0755 "${base}/usr/sbin/policy-rc.d"
  trap 'chroot_umounts "${base}"' EXIT
  chroot_mounts "${base}"
  # shellcheck disable=SC2046 # one package a word
  { chroot "${base}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive chroot "${base}" apt-get install -y -q --no-install-recommends $(packages); } \
    >"${work}/apt.log" 2>&1 || { tail -n 30 "${work}/apt.log" >&2; return 1; }
  chroot_umounts "${base}"
  trap - EXIT
  rm -f "${base}/usr/sbin/policy-rc.d"
}

# Kernel modules a benchmark VM does without (relative to /lib/modules/<version>/kernel): hardware a
# KubeVirt or QEMU guest never has, and drivers udev would load for emulated chipset parts (nested
# KVM, watchdog, SMBus, parallel port, cpufreq), which under emulation costs boot time.
unneeded_modules=(
  drivers/gpu drivers/media drivers/net/wireless drivers/infiniband drivers/staging drivers/bluetooth
  drivers/isdn drivers/iio drivers/nfc drivers/mtd drivers/usb drivers/thunderbolt drivers/hid
  drivers/input/touchscreen drivers/input/joystick drivers/input/tablet drivers/platform/chrome
  drivers/comedi drivers/hwmon drivers/target drivers/mmc drivers/atm drivers/parport drivers/watchdog
  drivers/i2c/busses drivers/i2c/muxes drivers/cpufreq drivers/edac drivers/input/misc drivers/video/fbdev
  arch/x86/kvm
  drivers/net/can drivers/net/usb drivers/net/ieee802154
  sound net/wireless net/mac80211 net/bluetooth net/nfc net/ieee802154 net/mac802154 net/can
  fs/btrfs fs/xfs fs/ocfs2 fs/gfs2 fs/jfs fs/reiserfs fs/nilfs2 fs/f2fs fs/ubifs fs/ceph fs/smb
)

# Step 2, the disk: the installed root file system plus vmbench's files and runner, trimmed, as a
# two-partition disk image, compressed, in a FROM scratch image. Also its own process.
build_disk() {
  local rootfs="${work}/rootfs" kver m
  chroot_umounts "${rootfs}"
  rm -rf --one-file-system "${rootfs}" && cp -a "${base}" "${rootfs}"
  cp -r --preserve=mode "${src}/rootfs/." "${rootfs}/"
  install -m 0755 "${work}/runner" "${rootfs}/usr/local/bin/runner"
  # Debian leaves networkd off. Masked: the serial getty (the console carries the runner's frames, and
  # root has no password), the timers that would wake up in the middle of a benchmark, and the netperf
  # package's netserver daemon (its init script), as the runner starts netserver itself for each
  # measurement, as in a pod.
  chroot "${rootfs}" env SYSTEMD_OFFLINE=1 systemctl enable -q systemd-networkd.service systemd-resolved.service
  chroot "${rootfs}" env SYSTEMD_OFFLINE=1 systemctl mask -q serial-getty@ttyS0.service apt-daily.timer apt-daily-upgrade.timer \
    dpkg-db-backup.timer e2scrub_all.timer fstrim.timer netperf.service
  # NFS: the server starts only on a master whose run uses the Shared target (the runner starts
  # it), and only NFSv4 is served (rootfs/etc/nfs.conf.d): rpcbind and statd, which NFSv3 needs,
  # are masked, and nothing of NFS starts at boot.
  chroot "${rootfs}" env SYSTEMD_OFFLINE=1 systemctl disable -q nfs-server.service nfs-client.target
  chroot "${rootfs}" env SYSTEMD_OFFLINE=1 systemctl mask -q rpcbind.service rpcbind.socket rpc-statd.service \
    rpc-statd-notify.service nfs-blkmap.service
  ln -sf ../run/systemd/resolve/stub-resolv.conf "${rootfs}/etc/resolv.conf"
  # Each VM its own identity: machine-id and ssh host keys are made at first boot.
  rm -f "${rootfs}"/etc/ssh/ssh_host_* "${rootfs}/var/lib/dbus/machine-id"
  : >"${rootfs}/etc/machine-id"
  # What a guest never reads: debootstrap's documentation (later packages had none, see
  # base/etc/dpkg), apt's lists and caches, logs of the build, unneeded kernel modules.
  find "${rootfs}/usr/share/doc" -type f ! -name copyright -delete
  find "${rootfs}/usr/share/doc" -type d -empty -delete
  rm -rf "${rootfs}"/usr/share/{man,info,locale,lintian}/* "${rootfs}"/var/lib/apt/lists/* \
    "${rootfs}"/var/cache/apt/* "${rootfs}"/var/cache/debconf/*-old "${rootfs}"/var/lib/dpkg/*-old
  find "${rootfs}/var/log" -type f -delete
  kver=$(basename "$(ls -d "${rootfs}"/lib/modules/*)")
  for m in "${unneeded_modules[@]}"; do rm -rf "${rootfs}/lib/modules/${kver}/kernel/${m}"; done
  # Of the wired NIC drivers, those of the models KubeVirt offers besides virtio (e1000, e1000e, igb,
  # rtl8139).
  find "${rootfs}/lib/modules/${kver}/kernel/drivers/net/ethernet" -mindepth 1 -maxdepth 1 \
    ! -name intel ! -name realtek -exec rm -rf {} +
  chroot "${rootfs}" depmod -a "${kver}"
  chroot "${rootfs}" dpkg-query -W >"${work}/packages.txt"

  # The boot partition: kernel and initrd leave the root file system for it.
  cp "${rootfs}/boot/vmlinuz-${kver}" "${work}/vmlinuz"
  cp "${rootfs}/boot/initrd.img-${kver}" "${work}/initrd.img"
  rm -rf "${rootfs:?}"/boot/* "${rootfs}"/{vmlinuz,initrd.img}{,.old}
  rm -f "${work}/boot.img"
  # Hidden sectors = the partition's first sector, where syslinux's boot sector looks for itself.
  mkfs.vfat -C -n VMBOOT -h 2048 "${work}/boot.img" $((boot_mib * 1024)) >/dev/null
  syslinux --install "${work}/boot.img"
  MTOOLS_SKIP_CHECK=1 mcopy -i "${work}/boot.img" "${work}/vmlinuz" "${work}/initrd.img" "${src}/syslinux.cfg" ::/

  rm -f "${work}/rootfs.img"
  truncate -s $(((disk_mib - 1 - boot_mib) * 1024 * 1024)) "${work}/rootfs.img"
  mkfs.ext4 -q -L "${root_label}" -m 0 -d "${rootfs}" "${work}/rootfs.img"

  # MBR: syslinux's boot code, partition 1 (FAT, active) at 1 MiB, partition 2 (ext4) after it.
  rm -f "${work}/disk.raw"
  truncate -s $((disk_mib * 1024 * 1024)) "${work}/disk.raw"
  printf 'label: dos\nunit: sectors\nstart=2048, size=%d, type=c, bootable\nstart=%d, type=83\n' \
    $((boot_mib * 2048)) $(((1 + boot_mib) * 2048)) | sfdisk -q "${work}/disk.raw"
  dd if=/usr/lib/syslinux/mbr/mbr.bin of="${work}/disk.raw" bs=440 count=1 conv=notrunc status=none
  dd if="${work}/boot.img" of="${work}/disk.raw" bs=1M seek=1 conv=notrunc status=none
  dd if="${work}/rootfs.img" of="${work}/disk.raw" bs=1M seek=$((1 + boot_mib)) conv=notrunc,sparse status=none

  mkdir -p "${out}"
  qemu-img convert -c -O qcow2 "${work}/disk.raw" "${out}/disk.qcow2.tmp"
  mv "${out}/disk.qcow2.tmp" "${out}/disk.qcow2"
  cp "${work}/packages.txt" "${out}/packages.txt"
  docker build -q -f "${src}/Dockerfile" -t "${image}" "${out}" >"${work}/docker.log" 2>&1 ||
    { cat "${work}/docker.log" >&2; return 1; }
  log "sizes: root file system $(du -sh --apparent-size "${rootfs}" | cut -f1), raw disk $(du -h --apparent-size "${work}/disk.raw" | cut -f1)" \
    "($(du -h "${work}/disk.raw" | cut -f1) written), qcow2 $(du -h "${out}/disk.qcow2" | cut -f1)," \
    "image $(docker image inspect -f '{{.Size}}' "${image}" | numfmt --to=iec)"
  rm -rf --one-file-system "${rootfs}" "${work}"/{rootfs.img,boot.img,disk.raw,vmlinuz,initrd.img}
}

# The runner of the runner image: same source, same flags as hack/images/vmbench.sh.
build_runner() {
  mkdir -p "${work}"
  (cd "${ROOT}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${work}/runner" ./cmd/runner)
}

build() {
  local mirror rootfs_hash disk_hash
  mirror=$(debian_mirror) || exit 1
  check_runner_packages
  apt_ensure debootstrap debian-archive-keyring dosfstools mtools syslinux syslinux-common fdisk e2fsprogs qemu-utils
  step "go build runner" build_runner

  rootfs_hash=$(inputs_hash "${suite}" "${mirror}" "$(packages)" "${src}/base" \
    "$(declare -f build_rootfs chroot_mounts chroot_umounts)")
  [ -d "${base}/usr" ] || rm -f "${BIN}/stamps/vm-disk-rootfs"
  cached_step vm-disk-rootfs "${rootfs_hash}" "${self}" __rootfs "${mirror}"

  disk_hash=$(inputs_hash "${rootfs_hash}" "${work}/runner" "${src}/rootfs" "${src}/syslinux.cfg" "${src}/Dockerfile" \
    "${boot_mib}" "${disk_mib}" "${root_label}" "${unneeded_modules[*]}" "$(declare -f build_disk)")
  { image_exists "${image}" && [ -f "${out}/disk.qcow2" ]; } || rm -f "${BIN}/stamps/vm-disk"
  cached_step vm-disk "${disk_hash}" "${self}" __disk
}

# --- boot-test: the built disk under QEMU, the way KubeVirt starts it ---

# The controller's user data (internal/platform/vmi.go, cloudInit) for a master, with a one-node
# plan, and a runcmd that reports what a VM needs to have to the serial console. Unlike the
# master's, it does not power off: the host checks, as the controller does for the other VMs, that
# cloud-init finished, and then powers the guest off over ssh.
test_user_data() {
  local t=$1 token=$2
  cat <<EOF
#cloud-config
hostname: master
disable_root: false
ssh_authorized_keys:
  - $(cat "${t}/id_ed25519.pub")
write_files:
  - path: /etc/ssh/sshd_config.d/vmbench.conf
    permissions: "0644"
    content: |
      Port 22
      Port 2222
      PermitRootLogin no
      Match LocalPort 2222
        PermitRootLogin prohibit-password
  - path: /root/.ssh/config
    permissions: "0600"
    content: |
      Host *
        Port 2222
        StrictHostKeyChecking no
        UserKnownHostsFile /dev/null
        LogLevel ERROR
  - path: /root/.ssh/id_ed25519
    permissions: "0600"
    content: |
$(sed 's/^/      /' "${t}/id_ed25519")
  - path: /etc/vmbench/plan.json
    permissions: "0644"
    content: |
      $(test_plan)
  - path: /etc/vmbench/token
    permissions: "0600"
    content: "${token}"
  - path: /usr/local/sbin/vmbench-boot-test
    permissions: "0755"
    content: |
$(test_guest_script | sed 's/^/      /')
runcmd:
  - [systemctl, restart, ssh]
  - [/usr/local/sbin/vmbench-boot-test]
EOF
}

# What a VM must have, checked from inside and written to the console: run by the test's runcmd.
test_guest_script() {
  cat <<'SCRIPT'
#!/bin/sh
# Writes to the console directly, as the runner does.
exec >/dev/ttyS0 2>&1
say() { echo "vmbench-boot-test: $*"; }
say "runcmd uptime=$(cut -d' ' -f1 /proc/uptime)s"
say "env: $(env | grep -E '^(LC_ALL|OPENBLAS_NUM_THREADS|OMPI_ALLOW_RUN_AS_ROOT|OMPI_ALLOW_RUN_AS_ROOT_CONFIRM)=' | sort | tr '\n' ' ')"
say "virt: $(systemd-detect-virt)"
say "runner: $(command -v runner) $(runner version)"
say "kernel: $(uname -r) $(cat /proc/cmdline)"
say "addresses: $(ip -4 -o addr show scope global | awk '{print $2, $4}' | tr '\n' ' ')"
say "default route: $(ip -4 route show default)"
say "dhcp: $(journalctl -b -u systemd-networkd --no-pager -o cat | grep -i dhcp | tr '\n' ' ')"
say "resolv.conf: $(grep -v '^#' /etc/resolv.conf | tr '\n' ' ')"
say "listening: $(ss -ltnH | awk '{print $4}' | sort | tr '\n' ' ')"
say "blas: $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
say "mpirun as root, no flag: $(mpirun -np 2 hostname 2>&1 | tr '\n' ' ')"
say "ssh root@localhost (port from ~/.ssh/config): $(ssh localhost runner version 2>&1)"
say "ssh root@localhost port 22 (refused): $(ssh -p 22 -o BatchMode=yes localhost true 2>&1 | tail -n 1)"
say "sysbench: $(sysbench cpu --threads=2 --time=2 run | grep 'events per second')"
say "runner run starts"
runner run --plan /etc/vmbench/plan.json --output /dev/ttyS0 --repeat 2 2>/var/log/vmbench-runner.log
say "runner exit=$? uptime=$(cut -d' ' -f1 /proc/uptime)s stderr: $(tail -n 5 /var/log/vmbench-runner.log | tr '\n' ' ')"
say "root fs: $(df -h / | tail -n 1)"
say "nfs: $(grep ' /mnt/vmbench-shared ' /proc/self/mountinfo | cut -d' ' -f5,9,10); versions $(cat /proc/fs/nfsd/versions 2>&1)"
say "listening after the runner: $(ss -ltnH | awk '{print $4}' | sort | tr '\n' ' ')"
say "failed units: $(systemctl --failed --no-legend --plain | tr '\n' ' ')"
say "packages: $(dpkg-query -W | wc -l); -dev: $(dpkg-query -W -f '${Package}\n' | grep -c -- '-dev$')"
# systemd-analyze waits for the end of the boot, which cloud-final (running this) holds up.
say "boot milestones (s): $(journalctl -b -o short-monotonic --no-pager |
  grep -E 'Run /init|systemd 252[^ ]* running|Reached target (sysinit|network-online|multi-user)|Cloud-init v' |
  sed -E 's/^\[ *([0-9]+)\.[0-9]+\] [^ ]+ /\1 /; s/( at |\.$).*//; s/Cloud-init v\. [0-9.]+ running //; s/ running in system mode.*//' | tr '\n' ';')"
say "done uptime=$(cut -d' ' -f1 /proc/uptime)s"
SCRIPT
}

# A one-node plan with short runs of the CPU, MPI+BLAS and disk tools, on every storage target: the
# Shared one is the master's own NFS export, mounted through loopback, as the controller's plan for a
# VM run has it (internal/platform/vmi.go).
test_plan() {
  printf '%s' '{"suite":"boot-test","namespace":"default","run":"boot-test","platform":"vm","platformType":"VM",' \
    '"repetition":1,"nodes":[{"name":"master","address":"localhost"}],"cpu":2,"memoryBytes":2147483648,' \
    '"localDir":"/var/lib/vmbench","rootFSDir":"/var/tmp/vmbench","sharedDir":"/mnt/vmbench-shared",' \
    '"sharedExport":"/srv/vmbench-shared","sshPort":2222,"benchmarks":[' \
    '{"name":"sysbench-cpu","type":"sysbench-cpu","sysbenchCPU":{"duration":"5s"}},' \
    '{"name":"hpcc","type":"hpcc","timeout":"15m","hpcc":{"problemSize":400,"nb":64,"ranksPerNode":2}},' \
    '{"name":"fio","type":"fio","fio":{"size":"64m","runtime":"5s"}},' \
    '{"name":"fio-size","type":"fio","fio":{"size":"32m","target":"Shared"}},' \
    '{"name":"iozone","type":"iozone","iozone":{"fileSize":"64M","recordSize":"64k","targets":["Local","RootFS","Shared"]}}]}'
}

# The controller's frame decoding (package frame) applied to the serial log.
test_decoder() {
  mkdir -p "$1" && cat >"$1/main.go" <<'EOF'
// Command decode prints the runner messages in a serial log, decoded as the controller does.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/runplan"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	msgs, err := frame.Scan(f, []byte(os.Args[2]))
	if err != nil {
		fmt.Println("frame errors:", err)
	}
	for _, d := range msgs {
		var m runplan.Message
		if err := json.Unmarshal(d.Payload, &m); err != nil {
			fmt.Println("bad payload:", err)
			continue
		}
		fmt.Printf("%s %s virtualization=%q metrics=%d seconds=%.1f error=%q\n",
			m.Kind, m.Benchmark, m.Virtualization, len(m.Metrics), m.Seconds, m.Error)
	}
}
EOF
}

# guest_ssh DIR PORT CMD...: runs CMD as root in the test guest, with the test's key.
guest_ssh() {
  local t=$1 port=$2
  shift 2
  ssh -i "${t}/id_ed25519" -p "${port}" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o LogLevel=ERROR -o ConnectTimeout=30 root@127.0.0.1 "$@"
}

# wait_for_line FILE TEXT PID: until FILE has TEXT; false when PID ended first.
wait_for_line() {
  until grep -aqF "$2" "$1" 2>/dev/null; do
    kill -0 "$3" 2>/dev/null || return 1
    sleep 1
  done
}

boot_test() {
  local t="${BIN}/vm-disk-test" disk="${out}/disk.qcow2" port=${VM_DISK_TEST_SSH_PORT:-22222}
  local token qemu_pid start
  [ -f "${disk}" ] || { log "no ${disk}: run ${self} first"; return 1; }
  apt_ensure qemu-system-x86 qemu-utils genisoimage openssh-client
  rm -rf "${t}" && mkdir -p "${t}"
  ssh-keygen -q -t ed25519 -N '' -C vmbench-boot-test -f "${t}/id_ed25519"
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  test_user_data "${t}" "${token}" >"${t}/user-data"
  printf 'instance-id: boot-test-%s\nlocal-hostname: master\n' "$(date +%s)" >"${t}/meta-data"
  # KubeVirt's cloudInitNoCloud: an ISO labelled cidata on a virtio disk.
  genisoimage -quiet -output "${t}/seed.iso" -volid cidata -joliet -rock "${t}/user-data" "${t}/meta-data"
  # As KubeVirt does with a containerDisk: a throw-away overlay, the image's qcow2 as its backing file.
  qemu-img create -q -f qcow2 -F qcow2 -b "${disk}" "${t}/overlay.qcow2"
  test_decoder "${t}/decode"

  start=${SECONDS}
  # q35, as KubeVirt's default machine type (no floppy or IDE for the guest to probe).
  timeout 1800 qemu-system-x86_64 -machine q35 -accel tcg -cpu max -smp 2 -m 2048 -nographic -monitor none -no-reboot \
    -serial "file:${t}/serial.log" \
    -drive "file=${t}/overlay.qcow2,if=virtio,format=qcow2" \
    -drive "file=${t}/seed.iso,if=virtio,format=raw,readonly=on" \
    -nic "user,model=virtio-net-pci,dnssearch=vmbench.test,hostfwd=tcp:127.0.0.1:${port}-:2222" \
    </dev/null >"${t}/qemu.log" 2>&1 &
  qemu_pid=$!
  log "QEMU (q35, TCG, 2 vCPUs, 2 GiB) started; serial console in ${t}/serial.log"
  wait_for_line "${t}/serial.log" "vmbench-boot-test: runcmd" "${qemu_pid}" ||
    { log "QEMU ended before cloud-init's runcmd"; tail -n 30 "${t}/serial.log" >&2; return 1; }
  log "boot -> runcmd marker: $((SECONDS - start))s"
  wait_for_line "${t}/serial.log" "vmbench-boot-test: done" "${qemu_pid}" ||
    { log "QEMU ended before the guest's checks were done"; tail -n 30 "${t}/serial.log" >&2; return 1; }
  log "boot -> checks and runner done: $((SECONDS - start))s"
  # Through QEMU's NAT to the guest's DHCP address, sshd on 2222 takes the key for root. The
  # controller's readiness check of a VM: cloud-init's boot-finished file.
  until guest_ssh "${t}" "${port}" test -e /var/lib/cloud/instance/boot-finished; do
    kill -0 "${qemu_pid}" 2>/dev/null || { log "QEMU ended before cloud-init finished"; return 1; }
    sleep 5
  done
  log "boot -> cloud-init finished (boot-finished seen over ssh): $((SECONDS - start))s"
  guest_ssh "${t}" "${port}" journalctl -b -o short-monotonic --no-pager >"${t}/journal.txt"
  # shellcheck disable=SC2016 # expanded by the guest's shell
  guest_ssh "${t}" "${port}" 'echo "ssh from the host: $(hostname), $(runner version), LC_ALL=${LC_ALL}" \
    "OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT}; cloud-init: $(cloud-init status)"
    echo "system: $(systemctl is-system-running); $(systemd-analyze time | head -n 1)"
    echo "slowest units: $(systemd-analyze blame --no-pager | head -n 6 | xargs)"' | sed 's/^/  /' >&2
  guest_ssh "${t}" "${port}" poweroff || true
  wait "${qemu_pid}" || log "QEMU exited with $?"
  log "boot -> power off: $((SECONDS - start))s; the guest's journal is in ${t}/journal.txt"
  grep -a 'vmbench-boot-test:' "${t}/serial.log" | tr -d '\r' | sed 's/^.*vmbench-boot-test: /  /' >&2
  log "runner frames on the console, decoded:"
  (cd "${ROOT}" && go run ./bin/vm-disk-test/decode "${t}/serial.log" "${token}") | sed 's/^/  /' >&2
}

case "${1:-build}" in
  build) build ;;
  boot-test) boot_test ;;
  __rootfs) build_rootfs "$2" ;;
  __disk) build_disk ;;
  *) echo "usage: $0 [build|boot-test]" >&2; exit 2 ;;
esac
