//go:build integration

package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// The tarball is a valid OCI image whose entrypoint, extracted and run, is parley, with parley-operator beside it.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	bins := Binaries{Runtime: filepath.Join(dir, "parley"), Operator: filepath.Join(dir, "parley-operator")}
	for bin, pkg := range map[string]string{bins.Runtime: "../../cmd/parley", bins.Operator: "../../cmd/parley-operator"} {
		gobuild := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
		gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := gobuild.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, out)
		}
	}
	out := filepath.Join(dir, "parley-image.tar")
	if err := build(bins, "/etc/ssl/certs/ca-certificates.crt", out, "ghcr.io/parley-dev/parley:test", "test"); err != nil {
		t.Fatal(err)
	}

	img := readOCIArchive(t, out, filepath.Join(dir, "layout"))
	if err := validate.Image(img); err != nil {
		t.Fatalf("not a valid image: %v", err)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want OCI", mt)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != User || len(cfg.Config.Entrypoint) != 1 || cfg.OS != "linux" {
		t.Fatalf("config: user %q, entrypoint %v, os %s", cfg.Config.User, cfg.Config.Entrypoint, cfg.OS)
	}

	rootfs := filepath.Join(dir, "rootfs")
	seen := untar(t, img, rootfs)
	for _, want := range []string{"parley", "parley-operator", "etc/ssl/certs/ca-certificates.crt", "etc/passwd"} {
		if !seen[want] {
			t.Errorf("the layer lacks %s", want)
		}
	}
	entry := filepath.Join(rootfs, cfg.Config.Entrypoint[0])
	help, err := exec.Command(entry, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "runtime") || !strings.Contains(string(help), "dev") {
		t.Errorf("%s --help: %v\n%s", cfg.Config.Entrypoint[0], err, help)
	}
	// The operator's flags: --help ends its run with status 2, after them.
	help, _ = exec.Command(filepath.Join(rootfs, "parley-operator"), "--help").CombinedOutput()
	if !strings.Contains(string(help), "-leader-elect") {
		t.Errorf("parley-operator --help:\n%s", help)
	}
}

// readOCIArchive extracts an OCI layout archive into dir and returns its one image, checking the name the
// ref.name annotation gives it.
func readOCIArchive(t *testing.T, archive, dir string) v1.Image {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	extract(t, tar.NewReader(f), dir)
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatalf("not an OCI image layout: %v", err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("index: %v, %+v", err, m)
	}
	if ref := m.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != "ghcr.io/parley-dev/parley:test" {
		t.Errorf("ref.name %q", ref)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// untar extracts the image's only layer into root and returns the names it holds.
func untar(t *testing.T, img v1.Image, root string) map[string]bool {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers: %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	return extract(t, tar.NewReader(rc), root)
}

// extract writes the regular files of a tar stream under root and returns the names the stream holds.
func extract(t *testing.T, tr *tar.Reader, root string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return seen
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[h.Name] = true
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := filepath.Join(root, filepath.Clean("/"+h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
	}
}
