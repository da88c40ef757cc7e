// Command image builds the parley container image without a Docker daemon: one layer with the static binary,
// the CA certificates and a non-root user, written as an OCI image layout archive (oci-archive) that
// `podman load`, `docker load` (Docker 25 and later), `skopeo copy oci-archive:` and `crane push` read.
// Run it with `make image`.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"
)

// User is the numeric user and group the image runs as: not root, and with no name to resolve.
const User = "65532:65532"

func main() {
	binary := flag.String("binary", "bin/linux/parley", "the static parley binary (the chat runtime) for linux")
	operator := flag.String("operator-binary", "bin/linux/parley-operator", "the static parley-operator binary for linux")
	certs := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA certificate bundle to include")
	out := flag.String("out", "bin/parley-image.tar", "the image tarball to write")
	tag := flag.String("tag", "ghcr.io/parley-dev/parley:dev", "the image's name in the tarball")
	version := flag.String("version", "dev", "the version label")
	flag.Parse()
	if err := build(Binaries{Runtime: *binary, Operator: *operator}, *certs, *out, *tag, *version); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}

// Binaries are the paths of the image's two executables.
type Binaries struct{ Runtime, Operator string }

func build(bins Binaries, certs, out, tag, version string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("image name: %w", err)
	}
	img, err := Image(bins, certs, version)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "parley-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("writing the image layout: %w", err)
	}
	// The ref.name annotation is the name `podman load` and `docker load` give the image.
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		imagespec.AnnotationRefName: ref.String(),
	})); err != nil {
		return fmt.Errorf("writing the image layout: %w", err)
	}
	return tarDir(dir, out)
}

// tarDir writes the files under dir into a tar archive at out, with paths relative to dir.
func tarDir(dir, out string) (err error) {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		return fmt.Errorf("archiving the image layout: %w", err)
	}
	return tw.Close()
}

// Image assembles the image from the binaries and the certificate bundle. Its entrypoint is /parley, the chat
// runtime; the operator's Deployment runs /parley-operator.
func Image(bins Binaries, certs, version string) (v1.Image, error) {
	files := []file{
		{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{path: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
	}
	for _, f := range []struct {
		src, path string
		mode      int64
	}{{certs, "etc/ssl/certs/ca-certificates.crt", 0o644}, {bins.Runtime, "parley", 0o755}, {bins.Operator, "parley-operator", 0o755}} {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return nil, err
		}
		files = append(files, file{path: f.path, mode: f.mode, data: data})
	}
	layerTar, err := tarOf(files)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{"/parley"}
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/"
	cfg.Config.Env = []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    "parley",
		"org.opencontainers.image.source":   "https://github.com/parley-dev/parley",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	return mutate.ConfigFile(img, cfg)
}

// file is one file of the layer.
type file struct {
	path string
	mode int64
	data []byte
}

// tarOf writes files into a tar archive with fixed owners and times, so the same inputs give the same layer.
func tarOf(files []file) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, f := range files {
		for _, d := range parents(f.path) {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.path, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), errors.Join(tw.Close())
}

// parents returns the directories above a path, outermost first.
func parents(path string) []string {
	var out []string
	for i := range len(path) {
		if path[i] == '/' {
			out = append(out, path[:i])
		}
	}
	return out
}
