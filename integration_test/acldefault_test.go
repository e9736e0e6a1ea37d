// SPDX-License-Identifier: MIT

package integration_test

// A new file's mode in a directory with a default ACL: the ACL, not the
// umask, masks it (acl(5)), as with cp, which gets it from the kernel by
// creating DEST with SOURCE's mode. fastcp creates its temporary file
// 0600 and sets the mode after: the same result, file and -r directory,
// in every directory of a tree (each looked up once: a second, a nested,
// and an existing one with a default ACL of its own).

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// aclOf is getfacl's view of path without its header, and its mode.
func aclOf(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(needTool(t, "getfacl"), "--omit-header", "--absolute-names", path).CombinedOutput()
	if err != nil {
		t.Fatalf("getfacl %s: %v %s", path, err, out)
	}
	return string(out) + " mode " + os.FileMode(statT(t, path).Mode&0o7777).String()
}

func TestNewFileModeFollowsDefaultACL(t *testing.T) {
	setfacl := needTool(t, "setfacl")
	cp := needTool(t, "cp")
	base := fsDir(t, "ext4")
	in := filepath.Join(base, "in")
	mustMkdir(t, in)
	writeFile(t, filepath.Join(in, "f"), []byte("data\n"), 0o644)
	mustMkdir(t, filepath.Join(in, "sub"))
	os.Chmod(filepath.Join(in, "sub"), 0o750)
	writeFile(t, filepath.Join(in, "sub", "g"), []byte("more\n"), 0o640)
	mustMkdir(t, filepath.Join(in, "sub", "deeper"))
	writeFile(t, filepath.Join(in, "sub", "deeper", "h"), []byte("deep\n"), 0o664)
	mustMkdir(t, filepath.Join(in, "sub2"))
	writeFile(t, filepath.Join(in, "sub2", "k"), []byte("two\n"), 0o666)
	for _, acl := range []string{"u::rwx,g::rwx,o::r-x,u:65534:rwx", "u::rwx,g::r-x,o::---"} {
		t.Run(acl, func(t *testing.T) {
			out := filepath.Join(base, "out")
			os.RemoveAll(out)
			mustMkdir(t, out)
			if b, err := exec.Command(setfacl, "-d", "-m", acl, out).CombinedOutput(); err != nil {
				t.Fatalf("setfacl: %v %s", err, b)
			}
			// An existing DEST directory whose default ACL differs from
			// the one its parent's gave it.
			for _, prog := range []string{cp, setup.Bin} {
				pre := filepath.Join(out, filepath.Base(prog)+"-pre", "sub")
				if err := os.MkdirAll(pre, 0o755); err != nil {
					t.Fatal(err)
				}
				if b, err := exec.Command(setfacl, "-d", "-m", "u::rwx,g::---,o::---", pre).CombinedOutput(); err != nil {
					t.Fatalf("setfacl: %v %s", err, b)
				}
			}
			for _, args := range [][]string{{"in/f", "out/X-f"}, {"-r", "in", "out/X-r"}, {"-r", "in/.", "out/X-pre"}} {
				var want, got []string
				for _, prog := range []string{cp, setup.Bin} {
					a := append([]string(nil), args...)
					a[len(a)-1] = filepath.Join("out", filepath.Base(prog)+a[len(a)-1][len("out/X"):])
					r := ccExec(t, prog, a, ccRun{dir: base, umask: "077"})
					if r.code != 0 || r.stderr != "" {
						t.Fatalf("%s %v: %v", prog, a, r)
					}
					var acls []string
					filepath.Walk(filepath.Join(base, a[len(a)-1]), func(p string, _ os.FileInfo, err error) error {
						if err == nil {
							acls = append(acls, aclOf(t, p))
						}
						return nil
					})
					if prog == cp {
						want = acls
					} else {
						got = acls
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%v: %d entries, cp made %d", args, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%v: entry %d:\n%s\ncp gives:\n%s", args, i, got[i], want[i])
					}
				}
			}
		})
	}
}
