// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"errors"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// aclXattr reads the ACL xattr name (system.posix_acl_access or _default)
// of path; nil when it has none.
func aclXattr(t testing.TB, path, name string) []byte {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(path, name, buf)
	if errors.Is(err, unix.ENODATA) {
		return nil
	}
	if err != nil {
		t.Fatalf("getxattr %s %s: %v", path, name, err)
	}
	return buf[:n]
}

func setfacl(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(needTool(t, "setfacl"), args...).CombinedOutput(); err != nil {
		t.Skipf("setfacl %v: %v %s (no ACLs on this filesystem)", args, err, out)
	}
}

// TestPreserveACL: the mode cp -p and -a keep includes a file's POSIX ACL
// (the named users' and groups' permissions, and the mask), and -a and
// --preserve=mode keep a directory's default ACL too; a copy without -p
// gets none. A source without an ACL copied with -p into a directory whose
// default ACL would give the new file one ends with the source's bare mode.
func TestPreserveACL(t *testing.T) {
	t.Parallel()
	const access, deflt = "system.posix_acl_access", "system.posix_acl_default"
	dir := t.TempDir()
	src := join(dir, "src")
	writeFile(t, src, []byte("acl\n"), 0o640)
	setfacl(t, "-m", "user:bin:rw-,group:daemon:r--", src)
	want := aclXattr(t, src, access)
	if want == nil {
		t.Fatal("setfacl left no access ACL")
	}
	for _, args := range [][]string{{"-p"}, {"-a"}, {"--preserve=mode"}} {
		dst := join(dir, "copy"+args[0])
		if r := fastcp(t, dir, append(args, src, dst)...); r.code != 0 || r.stderr != "" {
			t.Fatalf("%v: %v", args, r)
		}
		if got := aclXattr(t, dst, access); !bytes.Equal(got, want) {
			t.Errorf("%v: access ACL %x, want the source's %x", args, got, want)
		}
		if statT(t, dst).Mode&0o7777 != statT(t, src).Mode&0o7777 {
			t.Errorf("%v: mode %o, want %o", args, statT(t, dst).Mode&0o7777, statT(t, src).Mode&0o7777)
		}
	}
	if r := fastcp(t, dir, src, join(dir, "plain")); r.code != 0 || aclXattr(t, join(dir, "plain"), access) != nil {
		t.Errorf("a copy without -p has an access ACL (%v)", r)
	}

	tree := mustMkdir(t, join(dir, "tree"))
	setfacl(t, "-d", "-m", "user:bin:rwx", tree)
	setfacl(t, "-m", "user:bin:r-x", tree)
	wantDef, wantAcc := aclXattr(t, tree, deflt), aclXattr(t, tree, access)
	for _, args := range [][]string{{"-a"}, {"-r", "--preserve=mode"}} {
		dst := join(dir, "tree-copy"+args[len(args)-1])
		if r := fastcp(t, dir, append(args, tree, dst)...); r.code != 0 || r.stderr != "" {
			t.Fatalf("%v: %v", args, r)
		}
		if got := aclXattr(t, dst, deflt); !bytes.Equal(got, wantDef) {
			t.Errorf("%v: default ACL %x, want the source's %x", args, got, wantDef)
		}
		if got := aclXattr(t, dst, access); !bytes.Equal(got, wantAcc) {
			t.Errorf("%v: directory's access ACL %x, want %x", args, got, wantAcc)
		}
	}

	// A bare source into tree, whose default ACL a new file inherits.
	bare := join(dir, "bare")
	writeFile(t, bare, []byte("bare\n"), 0o600)
	unix.Chmod(bare, 0o604)
	if r := fastcp(t, dir, "-p", bare, join(tree, "bare")); r.code != 0 || r.stderr != "" {
		t.Fatal(r)
	}
	if got := aclXattr(t, join(tree, "bare"), access); got != nil {
		t.Errorf("cp -p of a file without an ACL left the inherited one: %x", got)
	}
	if m := statT(t, join(tree, "bare")).Mode & 0o7777; m != 0o604 {
		t.Errorf("mode %o, want the source's 604", m)
	}
}
