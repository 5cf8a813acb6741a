# ctr/lib.sh - shared by the container tests (sourced after agent/lib.sh or
# lib_dev.sh): skip where no OCI runtime can make a container here, and
# build the test image.
need_runtime() {
  command -v crun >/dev/null || px_skip oci-runtime "crun is not installed (make deps)"
  command -v busybox >/dev/null || px_skip oci-runtime "busybox is not installed (make deps)"
  # crun needs a mount namespace of its own: not every sandbox grants one
  unshare -m true 2>/dev/null || px_skip oci-runtime "cannot make a mount namespace here (crun needs one)"
}

# make_test_image DIR: DIR/oci (tag v1) and DIR/busybox.tar (ctr/make_image.sh).
make_test_image() {
  mkdir -p "$1"
  bash "$PX_SRC/tests/integration/ctr/make_image.sh" "$1"
}
