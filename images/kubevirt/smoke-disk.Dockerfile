# The containerDisk of `hack/kind/kubevirt.sh --smoke-test`: the KVM probe guest as a 1 MiB raw disk
# that halts after printing its marker, with its CRC32 made larger than 2^31 so that its VMI status
# exercises the checksum schema fix. A containerDisk is FROM scratch, the disk under /disk/ owned by
# the qemu user 107.
FROM scratch

COPY --chown=107:107 disk.img /disk/disk.img
