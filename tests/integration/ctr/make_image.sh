#!/usr/bin/env bash
# make_image.sh OUT: a tiny image from this machine's busybox (and the
# libraries it links), written twice: OUT/oci (an OCI image layout, tagged
# "v1") and OUT/busybox.tar (a docker archive). Two layers, the second
# gzip'd with whiteouts: /opt/gone is removed (.wh.gone) and /opt/dir is
# opaque (.wh..wh..opq: its old file disappears, its new one stays), so a
# job can tell that whiteouts were applied. The image's configuration sets
# PATH, IMAGE_VAR=from-image, OVERRIDE_ME=from-image and WorkingDir /work.
set -euo pipefail
out=$1
bb=$(command -v busybox)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
l1=$w/l1 l2=$w/l2
mkdir -p "$l1"/{bin,etc,work,opt/dir,tmp} "$l2/opt/dir"
cp "$bb" "$l1/bin/busybox"
for a in sh ls cat id echo env pwd stat head tail grep sleep true test touch dd mkdir rm wc; do ln -s busybox "$l1/bin/$a"; done
# the shared libraries busybox needs (none when it is static)
for lib in $(ldd "$bb" 2>/dev/null | grep -o '/[^ ]*' || true); do
  mkdir -p "$l1$(dirname "$lib")"
  cp -L "$lib" "$l1$lib"
done
printf 'NAME="Phalanx test image"\nID=pxtest\n' >"$l1/etc/os-release"
echo gone >"$l1/opt/gone"
echo old >"$l1/opt/dir/old"
echo new >"$l2/opt/dir/new"
touch "$l2/opt/.wh.gone" "$l2/opt/dir/.wh..wh..opq"
tar -C "$l1" -cf "$w/layer1.tar" .
tar -C "$l2" -cf - . | gzip -n >"$w/layer2.tar.gz"
sha() { sha256sum "$1" | cut -d' ' -f1; }
d1=$(sha "$w/layer1.tar") d2=$(sha "$w/layer2.tar.gz")
diff1=$d1 diff2=$(gzip -dc "$w/layer2.tar.gz" | sha256sum | cut -d' ' -f1)
cat >"$w/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin:/usr/bin","IMAGE_VAR=from-image","OVERRIDE_ME=from-image"],"WorkingDir":"/work","Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:$diff1","sha256:$diff2"]}}
JSON
dc=$(sha "$w/config.json")

# OCI layout
o=$out/oci
mkdir -p "$o/blobs/sha256"
cp "$w/layer1.tar" "$o/blobs/sha256/$d1"
cp "$w/layer2.tar.gz" "$o/blobs/sha256/$d2"
cp "$w/config.json" "$o/blobs/sha256/$dc"
size() { stat -c %s "$1"; }
cat >"$w/manifest.json" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$dc","size":$(size "$w/config.json")},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:$d1","size":$(size "$w/layer1.tar")},{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$d2","size":$(size "$w/layer2.tar.gz")}]}
JSON
dm=$(sha "$w/manifest.json")
cp "$w/manifest.json" "$o/blobs/sha256/$dm"
echo '{"imageLayoutVersion":"1.0.0"}' >"$o/oci-layout"
cat >"$o/index.json" <<JSON
{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:$dm","size":$(size "$w/manifest.json"),"annotations":{"org.opencontainers.image.ref.name":"v1"}}]}
JSON

# docker archive (docker save's layout)
a=$w/archive
mkdir -p "$a/$d1" "$a/$d2"
cp "$w/layer1.tar" "$a/$d1/layer.tar"
gzip -dc "$w/layer2.tar.gz" >"$a/$d2/layer.tar"
cp "$w/config.json" "$a/$dc.json"
echo "[{\"Config\":\"$dc.json\",\"RepoTags\":[\"busybox:test\"],\"Layers\":[\"$d1/layer.tar\",\"$d2/layer.tar\"]}]" >"$a/manifest.json"
(cd "$a" && tar -cf "$out/busybox.tar" -- *)
chmod -R a+rX "$out"
