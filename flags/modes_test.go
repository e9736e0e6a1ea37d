// SPDX-License-Identifier: MIT

package flags

import (
	"strings"
	"testing"
)

// TestUpdateMode: -n, -i, -u, --update and -f settle into one update rule,
// -i and -f as cp 9.11 combines them, the last of -i and -n winning.
func TestUpdateMode(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		update      UpdateMode
		interactive bool
		force       bool
	}{
		{nil, UpdateAll, false, false},
		{[]string{"--update=all"}, UpdateAll, false, false},
		{[]string{"--update=none"}, UpdateNone, false, false},
		{[]string{"--update=none-fail"}, UpdateNoneFail, false, false},
		{[]string{"--update=older"}, UpdateOlder, false, false},
		{[]string{"-u"}, UpdateOlder, false, false},
		{[]string{"-n"}, UpdateNone, false, false},
		{[]string{"--no-clobber"}, UpdateNone, false, false},
		{[]string{"-i"}, UpdateAll, true, false},
		{[]string{"-i", "-n"}, UpdateNone, false, false},
		{[]string{"-n", "-i"}, UpdateAll, true, false},
		{[]string{"-n", "-u"}, UpdateNone, false, false},
		{[]string{"-u", "-n"}, UpdateNone, false, false},
		{[]string{"-n", "--update=all"}, UpdateNone, false, false},
		{[]string{"-i", "-u"}, UpdateOlder, true, false},
		{[]string{"-u", "-i"}, UpdateOlder, true, false},
		{[]string{"-i", "--update=none"}, UpdateNone, false, false},
		{[]string{"-i", "--update=none-fail"}, UpdateNoneFail, false, false},
		{[]string{"--update=none-fail", "--update=older"}, UpdateOlder, false, false},
		{[]string{"--update=older", "--update=all"}, UpdateAll, false, false},
		{[]string{"-i", "-f"}, UpdateAll, true, true},
		{[]string{"-f", "-i"}, UpdateAll, true, true},
		{[]string{"-f", "-n"}, UpdateNone, false, true},
		{[]string{"-n", "-f"}, UpdateNone, false, true},
	} {
		args := append(append([]string{}, tc.args...), "a", "b")
		o, err := ParseEnv(args, noEnv)
		if err != nil {
			t.Fatalf("Parse(%q): %v", args, err)
		}
		if o.Update != tc.update || o.Interactive != tc.interactive || o.Force != tc.force {
			t.Errorf("Parse(%q): Update %v, Interactive %v, Force %v; want %v, %v, %v",
				args, o.Update, o.Interactive, o.Force, tc.update, tc.interactive, tc.force)
		}
	}
}

func TestUpdateModeWords(t *testing.T) {
	for m, w := range UpdateWords {
		if got := UpdateMode(m).String(); got != w {
			t.Errorf("UpdateMode(%d).String() = %q, want %q", m, got, w)
		}
	}
	for m, replaces := range map[UpdateMode]bool{UpdateAll: true, UpdateOlder: true, UpdateNone: false, UpdateNoneFail: false} {
		if m.Replaces() != replaces {
			t.Errorf("%v.Replaces() = %v, want %v", m, m.Replaces(), replaces)
		}
	}
}

// TestLinkMode: -l and -s each give their mode, both together are a usage
// error whatever their order, and -f with either removes DEST first.
func TestLinkMode(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		link   LinkMode
		remove bool
		err    string
	}{
		{nil, LinkNone, false, ""},
		{[]string{"-l"}, LinkHard, false, ""},
		{[]string{"--link"}, LinkHard, false, ""},
		{[]string{"-s"}, LinkSymbolic, false, ""},
		{[]string{"--symbolic-link"}, LinkSymbolic, false, ""},
		{[]string{"-l", "-l"}, LinkHard, false, ""},
		{[]string{"-f", "-l"}, LinkHard, true, ""},
		{[]string{"-s", "-f"}, LinkSymbolic, true, ""},
		{[]string{"-s", "--remove-destination"}, LinkSymbolic, true, ""},
		{[]string{"-f"}, LinkNone, false, ""},
		{[]string{"-l", "-s"}, LinkNone, false, "cannot make both hard and symbolic links"},
		{[]string{"-s", "-l"}, LinkNone, false, "cannot make both hard and symbolic links"},
	} {
		args := append(append([]string{}, tc.args...), "a", "b")
		o, err := ParseEnv(args, noEnv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): error %v, want %q", args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Parse(%q): %v", args, err)
		}
		if o.Link != tc.link || o.RemoveDestination != tc.remove {
			t.Errorf("Parse(%q): Link %d, RemoveDestination %v; want %d, %v",
				args, o.Link, o.RemoveDestination, tc.link, tc.remove)
		}
	}
}
