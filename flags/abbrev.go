// SPDX-License-Identifier: MIT

package flags

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Long options may be abbreviated to any prefix that names one option, as
// getopt_long allows (--verb, --recur). pflag does not do this, so the
// arguments are rewritten with the full names before pflag sees them. An
// ambiguous prefix is a usage error naming the candidates in the order of
// cp's option table (then fastcp's own options), in glibc's words.

// argKind says whether a long option takes an argument.
type argKind int

const (
	argNone     argKind = iota // --verbose
	argRequired                // --suffix=S or --suffix S
	argOptional                // --backup[=CONTROL]: only with "="
)

// longOption is one entry of the table abbreviations are resolved against.
type longOption struct {
	name string
	// canon is the flag the name stands for: itself, or for an alias
	// (--path) the option it is an alias of. Abbreviations matching only
	// one canon are not ambiguous (--pa: --parents and --path).
	canon string
	arg   argKind
	cp    bool // one of GNU cp's options (the first tier)
}

// cpOrder is GNU cp 9.11's long_opts order: glibc lists the candidates of
// an ambiguous prefix in table order. fastcp's own options follow.
var cpOrder = []string{
	"archive", "attributes-only", "backup", "copy-contents", "debug", "dereference", "force",
	"interactive", "link", "no-clobber", "no-dereference", "no-preserve", "no-target-directory",
	"one-file-system", "parents", "path", "preserve", "recursive", "remove-destination", "sparse",
	"reflink", "strip-trailing-slashes", "suffix", "symbolic-link", "target-directory", "update",
	"verbose", "keep-directory-symlink", "context", "help", "version",
}

// aliases are long names cp accepts that are not flags of their own.
var aliases = map[string]string{"path": "parents"}

// longTable builds the resolution table from the flag set.
func longTable(fs *pflag.FlagSet) []longOption {
	kind := func(f *pflag.Flag) argKind {
		switch {
		case f.NoOptDefVal != "" && f.Value.Type() == "bool":
			return argNone
		case f.NoOptDefVal != "":
			return argOptional
		}
		return argRequired
	}
	var table []longOption
	seen := map[string]bool{}
	for _, n := range cpOrder {
		canon := n
		if a, ok := aliases[n]; ok {
			canon = a
		}
		f := fs.Lookup(canon)
		if f == nil {
			continue
		}
		table = append(table, longOption{name: n, canon: canon, arg: kind(f), cp: true})
		seen[n] = true
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if seen[f.Name] || slices.Contains(shortOnly, f.Name) {
			return
		}
		table = append(table, longOption{name: f.Name, canon: f.Name, arg: kind(f)})
	})
	return table
}

// resolveLong finds the option a (possibly abbreviated) long name means.
// cp's options come first: a prefix that names one of them means it, as
// in cp, even where fastcp's own options share the prefix (--b is
// --backup, not ambiguous with --buffer-size), so that command lines
// written for cp mean the same; an ambiguous prefix names cp's candidates,
// as cp does. fastcp's own options are abbreviated among themselves where
// no cp option matches (--stra, --j). It returns nil and no error for a
// name no option starts with (pflag then reports it as unrecognized).
func resolveLong(table []longOption, name, typed string) (*longOption, error) {
	for i := range table {
		if table[i].name == name {
			return &table[i], nil
		}
	}
	nCp := 0
	for nCp < len(table) && table[nCp].cp {
		nCp++
	}
	for _, tier := range [][]longOption{table[:nCp], table[nCp:]} {
		var found *longOption
		ambiguous := false
		for i := range tier {
			o := &tier[i]
			if !strings.HasPrefix(o.name, name) {
				continue
			}
			if found == nil {
				found = o
			} else if found.canon != o.canon || found.arg != o.arg {
				ambiguous = true
			}
		}
		if found == nil {
			continue
		}
		if !ambiguous {
			return found, nil
		}
		var b strings.Builder
		b.WriteString("option '")
		b.WriteString(typed)
		b.WriteString("' is ambiguous; possibilities:")
		// glibc lists the first match, then every later one that differs
		// from it (--path, the same as --parents, is left out).
		for _, o := range tier {
			if strings.HasPrefix(o.name, name) && (o == *found || o.canon != found.canon || o.arg != found.arg) {
				b.WriteString(" '--")
				b.WriteString(o.name)
				b.WriteString("'")
			}
		}
		return nil, &UsageError{Msg: b.String()}
	}
	return nil, nil
}

// shortWithArg lists the short options that take an argument (-t DIR).
func shortWithArg(fs *pflag.FlagSet) string {
	var s string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Shorthand != "" && f.NoOptDefVal == "" {
			s += f.Shorthand
		}
	})
	return s
}

// expandArgs returns args with every long option spelled in full, or a
// usage error for an ambiguous one, or for an argument given to an option
// that takes none. posix stops at the first operand, as getopt does under
// POSIXLY_CORRECT. args is not modified.
func expandArgs(fs *pflag.FlagSet, args []string, posix bool) ([]string, error) {
	var table []longOption
	var withArg string
	out := args
	copied := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return out, nil
		case strings.HasPrefix(a, "--"):
			if table == nil {
				table = longTable(fs)
			}
			name, value, hasValue := strings.Cut(a[2:], "=")
			o, err := resolveLong(table, name, a)
			if err != nil {
				return nil, err
			}
			if o == nil {
				continue
			}
			if o.arg == argNone && hasValue {
				return nil, usagef("option '--%s' doesn't allow an argument", o.name)
			}
			full := "--" + o.canon
			if hasValue {
				full += "=" + value
			}
			if full != a {
				if !copied {
					out, copied = slices.Clone(args), true
				}
				out[i] = full
			}
			if o.arg == argRequired && !hasValue {
				i++ // the next argument is the value, whatever it looks like
			}
		case len(a) > 1 && a[0] == '-':
			if withArg == "" {
				withArg = shortWithArg(fs)
			}
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(withArg, a[j]) >= 0 {
					if j == len(a)-1 {
						i++ // -t DIR
					}
					break // -tDIR: the rest is the value
				}
			}
		default:
			if posix {
				return out, nil
			}
		}
	}
	return out, nil
}
