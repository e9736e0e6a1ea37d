// SPDX-License-Identifier: MIT

package flags

import (
	"fmt"
	"strings"

	"fastcp/output"
)

// argChoice is one word an option argument may be, and the value it
// stands for (several words may share one: "none" and "off").
type argChoice struct {
	word  string
	value int
}

// argmatch finds arg among choices as cp's argmatch does: an exact word,
// or a prefix of words that all stand for the same value. context names
// the option in the message ("--preserve", "backup type").
func argmatch(arg, context string, choices []argChoice) (int, error) {
	found := -1
	ambiguous := false
	for _, c := range choices {
		if c.word == arg {
			return c.value, nil
		}
		if strings.HasPrefix(c.word, arg) {
			switch {
			case found < 0:
				found = c.value
			case found != c.value:
				ambiguous = true
			}
		}
	}
	what := "invalid"
	switch {
	case ambiguous:
		what = "ambiguous"
	case found >= 0:
		return found, nil
	}
	return 0, &UsageError{
		Msg:  fmt.Sprintf("%s argument %s for %s", what, output.Quote(arg), output.Quote(context)),
		Hint: choiceList(choices),
	}
}

// choiceList is argmatch's list of valid arguments, the words of one
// value on one line.
func choiceList(choices []argChoice) string {
	var b strings.Builder
	b.WriteString("Valid arguments are:")
	for i, c := range choices {
		if i > 0 && choices[i-1].value == c.value {
			fmt.Fprintf(&b, ", '%s'", c.word)
			continue
		}
		fmt.Fprintf(&b, "\n  - '%s'", c.word)
	}
	return b.String()
}

// wordChoices makes one choice per word, valued by its index.
func wordChoices(words []string) []argChoice {
	c := make([]argChoice, len(words))
	for i, w := range words {
		c[i] = argChoice{w, i}
	}
	return c
}

// backupChoices are cp's version-control words, in cp's order.
var backupChoices = []argChoice{
	{"none", int(BackupNone)}, {"off", int(BackupNone)},
	{"simple", int(BackupSimple)}, {"never", int(BackupSimple)},
	{"existing", int(BackupExisting)}, {"nil", int(BackupExisting)},
	{"numbered", int(BackupNumbered)}, {"t", int(BackupNumbered)},
}

// BackupWords are the values --backup takes.
var BackupWords = func() []string {
	var w []string
	for _, c := range backupChoices {
		w = append(w, c.word)
	}
	return w
}()

// backupType is the backup kind once every option is read: --backup's
// CONTROL, else VERSION_CONTROL, else existing (gnulib's xget_version).
func backupType(st *parseState) (BackupMode, error) {
	if st.versionControl != "" {
		v, err := argmatch(st.versionControl, "backup type", backupChoices)
		return BackupMode(v), err
	}
	if env, _ := st.env("VERSION_CONTROL"); env != "" {
		v, err := argmatch(env, "$VERSION_CONTROL", backupChoices)
		return BackupMode(v), err
	}
	return BackupExisting, nil
}

// backupSuffix is -S's SUFFIX, else SIMPLE_BACKUP_SUFFIX, else "~"; one
// that is empty or has a slash is not used (gnulib's backupfile).
func backupSuffix(st *parseState) string {
	s := ""
	if st.suffix != nil {
		s = *st.suffix
	} else {
		s, _ = st.env("SIMPLE_BACKUP_SUFFIX")
	}
	if s == "" || strings.Contains(s, "/") {
		return "~"
	}
	return s
}

// UpdateMode is the rule for an existing DEST (--update=WHEN, -u, -n): the
// values in UpdateWords' order.
type UpdateMode uint8

const (
	// UpdateAll replaces every existing DEST (the default, --update=all).
	UpdateAll UpdateMode = iota
	// UpdateNone skips an existing DEST silently (-n, --update=none).
	UpdateNone
	// UpdateNoneFail skips an existing DEST with a diagnostic and exit
	// status 1 (--update=none-fail).
	UpdateNoneFail
	// UpdateOlder replaces a DEST only when SOURCE is newer (-u,
	// --update=older).
	UpdateOlder
)

// Replaces reports whether the rule lets some existing DEST be replaced.
func (m UpdateMode) Replaces() bool { return m == UpdateAll || m == UpdateOlder }

// String is the rule's --update word.
func (m UpdateMode) String() string { return UpdateWords[m] }

// LinkMode is what is made instead of a copy of the data (-l, -s).
type LinkMode uint8

const (
	// LinkNone copies the data (neither -l nor -s).
	LinkNone LinkMode = iota
	// LinkHard makes hard links (-l, --link).
	LinkHard
	// LinkSymbolic makes symbolic links (-s, --symbolic-link).
	LinkSymbolic
)

// UpdateWords are the values --update takes.
var UpdateWords = []string{"all", "none", "none-fail", "older"}

// updateValue is --update[=WHEN] and -u: the last one given is the update
// rule (parseState.settleUpdate combines it with -i and -n).
type updateValue struct{ st *parseState }

func (v *updateValue) String() string { return "" }
func (v *updateValue) Type() string   { return "WHEN" }

func (v *updateValue) Set(s string) error {
	if s == noValue {
		v.st.update = UpdateOlder // -u, --update
		return nil
	}
	w, err := argmatch(s, "--update", wordChoices(UpdateWords))
	if err != nil {
		return err
	}
	v.st.update = UpdateMode(w)
	return nil
}

// backupValue is --backup[=CONTROL] and -b.
type backupValue struct{ st *parseState }

func (v *backupValue) String() string { return "" }
func (v *backupValue) Type() string   { return "CONTROL" }

func (v *backupValue) Set(s string) error {
	v.st.makeBackups = true
	if s != noValue {
		v.st.versionControl = s
	}
	return nil
}

// suffixValue is -S, --suffix=SUFFIX: it implies --backup, as in cp.
type suffixValue struct{ st *parseState }

func (v *suffixValue) String() string { return "" }
func (v *suffixValue) Type() string   { return "SUFFIX" }

func (v *suffixValue) Set(s string) error {
	v.st.makeBackups = true
	v.st.suffix = &s
	return nil
}

// contextValue is -Z, --context[=CTX].
type contextValue struct{ o *Options }

func (v *contextValue) String() string { return "" }
func (v *contextValue) Type() string   { return "CTX" }

func (v *contextValue) Set(s string) error {
	v.o.SetContext = true
	if s != noValue {
		v.o.Context, v.o.ContextArg = s, true
	}
	return nil
}
