// SPDX-License-Identifier: MIT

package flags

import (
	"fastcp/checksum"
	"fastcp/output"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// enumValue is a pflag.Value accepting one of a fixed list of words.
type enumValue[T ~int] struct {
	p     *T
	names []string
	flag  string
}

func newEnum[T ~int](p *T, names []string, flag string) *enumValue[T] {
	return &enumValue[T]{p: p, names: names, flag: flag}
}

func (e *enumValue[T]) String() string {
	if int(*e.p) < len(e.names) {
		return e.names[*e.p]
	}
	return ""
}

func (e *enumValue[T]) Type() string { return "WORD" }

func (e *enumValue[T]) Set(s string) error {
	v, err := argmatch(s, "--"+e.flag, wordChoices(e.names))
	if err != nil {
		return err
	}
	*e.p = T(v)
	return nil
}

// targetsValue is -t DIRECTORY: each one given is added to the list (GNU
// cp refuses a second one; fastcp copies into each).
type targetsValue struct{ o *Options }

func (v *targetsValue) String() string { return strings.Join(v.o.TargetDirs, ",") }
func (v *targetsValue) Type() string   { return "DIRECTORY" }

func (v *targetsValue) Set(s string) error {
	v.o.TargetDirs = append(v.o.TargetDirs, s)
	return nil
}

// progressValue is --progress[=FORMAT]: bar (bare --progress) or json.
type progressValue struct{ o *Options }

func (v *progressValue) String() string {
	if v.o.Progress == ProgressJSON {
		return "json"
	}
	return "bar"
}

func (v *progressValue) Type() string { return "FORMAT" }

func (v *progressValue) Set(s string) error {
	i, err := argmatch(s, "--progress", wordChoices(ProgressFormats))
	if err != nil {
		return err
	}
	v.o.Progress = []ProgressMode{ProgressOn, ProgressJSON}[i]
	return nil
}

// SizeHint follows a usage error in a SIZE: it names every suffix ParseSize
// takes.
const SizeHint = "SIZE is a number of bytes with an optional suffix: K, M, G or T (powers of 1024), in either case, alone or followed by B or iB (1M, 1m, 1MB, 1MiB), or B for bytes."

// sizeValue is a pflag.Value for SIZE arguments: a number of bytes with an
// optional K, M, G or T suffix (powers of 1024; "KiB" and "k" accepted too).
type sizeValue[T int | int64] struct {
	p        *T
	flag     string
	min, max int64
}

func (v *sizeValue[T]) String() string { return strconv.FormatInt(int64(*v.p), 10) }
func (v *sizeValue[T]) Type() string   { return "SIZE" }

func (v *sizeValue[T]) Set(s string) error {
	n, err := ParseSize(s)
	switch {
	case err == nil && n < v.min && v.max == math.MaxInt64:
		err = fmt.Errorf("must be at least %s", FormatSize(v.min))
	case err == nil && (n < v.min || n > v.max):
		err = fmt.Errorf("out of range: %s to %s", FormatSize(v.min), FormatSize(v.max))
	}
	if err != nil {
		return &UsageError{
			Msg:  fmt.Sprintf("invalid --%s argument %s: %v", v.flag, output.Quote(s), err),
			Hint: SizeHint,
		}
	}
	*v.p = T(n)
	return nil
}

// ParseSize parses "4096", "256K", "1M", "2GiB", "1t", "512B": digits, then
// nothing, B, or one of K M G T (either case, powers of 1024) optionally
// followed by B or iB.
func ParseSize(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits, suffix := s[:i], s[i:]
	var shift uint
	if suffix != "" && suffix != "B" {
		switch suffix[0] {
		case 'K', 'k':
			shift = 10
		case 'M', 'm':
			shift = 20
		case 'G', 'g':
			shift = 30
		case 'T', 't':
			shift = 40
		}
		if rest := suffix[1:]; shift == 0 || (rest != "" && rest != "B" && rest != "iB") {
			return 0, fmt.Errorf("not a size")
		}
	}
	if digits == "" {
		return 0, fmt.Errorf("not a size")
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("too large")
	}
	return n << shift, nil
}

// FormatSize prints n bytes with the largest exact binary suffix.
func FormatSize(n int64) string {
	for _, u := range []struct {
		shift  uint
		suffix string
	}{{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

// intValue is a pflag.Value for a positive count.
type intValue struct {
	p        *int
	flag     string
	min, max int
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "N" }

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < v.min || n > v.max {
		return &UsageError{
			Msg:  fmt.Sprintf("invalid --%s argument %s", v.flag, output.Quote(s)),
			Hint: fmt.Sprintf("N is a whole number from %d to %d.", v.min, v.max),
		}
	}
	*v.p = n
	return nil
}

// preserveValue is --preserve[=LIST] (on) and --no-preserve=LIST (off).
type preserveValue struct {
	o  *Options
	on bool
}

// PreserveWords are the attribute names --preserve takes, in cp's order.
var PreserveWords = []string{"mode", "timestamps", "ownership", "links", "context", "xattr", "all"}

const (
	preserveMode = iota
	preserveTimestamps
	preserveOwnership
	preserveLinks
	preserveContext
	preserveXattr
	preserveAll
)

func (v *preserveValue) String() string { return "" }
func (v *preserveValue) Type() string   { return "LIST" }

func (v *preserveValue) Set(s string) error {
	flag := "--preserve"
	if !v.on {
		flag = "--no-preserve"
	}
	o, on := v.o, v.on
	p := &o.Preserve
	for _, w := range strings.Split(s, ",") {
		a, err := argmatch(w, flag, wordChoices(PreserveWords))
		if err != nil {
			return err
		}
		switch a {
		case preserveMode:
			p.Mode, o.NoPreserveMode = on, !on
		case preserveTimestamps:
			p.Timestamps = on
		case preserveOwnership:
			p.Ownership = on
		case preserveLinks:
			o.HardLinks = on
		case preserveContext:
			o.PreserveContext = on
		case preserveXattr:
			// Asked for by name: a DEST that cannot hold them is an
			// error (with all or -a, silence).
			p.Xattr, o.XattrExplicit = on, on
		case preserveAll:
			*p = Preserve{on, on, on, on}
			o.HardLinks, o.NoPreserveMode = on, !on
			if !on {
				o.XattrExplicit, o.PreserveContext = false, false
			}
		}
	}
	return nil
}

// verifyValue is --verify[=WHAT]: dest (a bare --verify) reads DEST back;
// source reads SOURCE again too.
type verifyValue struct{ o *Options }

// VerifyWords are the values --verify takes.
var VerifyWords = []string{"dest", "source"}

func (v *verifyValue) String() string { return "" }
func (v *verifyValue) Type() string   { return "WORD" }

func (v *verifyValue) Set(s string) error {
	w, err := argmatch(s, "--verify", wordChoices(VerifyWords))
	if err != nil {
		return err
	}
	v.o.Verify, v.o.VerifySource = true, w == 1
	return nil
}

// checksumValue is --checksum[=ALGORITHM].
type checksumValue struct{ o *Options }

func (v *checksumValue) String() string { return "" }
func (v *checksumValue) Type() string   { return "ALGORITHM" }

func (v *checksumValue) Set(s string) error {
	a, err := argmatch(s, "--checksum", wordChoices(checksum.Names[1:]))
	if err != nil {
		return err
	}
	v.o.Checksum = checksum.Algorithm(a + 1)
	return nil
}

// checksumFileValue is --checksum-file=FILE.
type checksumFileValue struct{ o *Options }

func (v *checksumFileValue) String() string { return v.o.ChecksumFile }
func (v *checksumFileValue) Type() string   { return "FILE" }

func (v *checksumFileValue) Set(s string) error {
	if s == "" {
		return &UsageError{
			Msg:  "invalid --checksum-file argument ''",
			Hint: "FILE is the manifest's name, or - for standard output.",
		}
	}
	v.o.ChecksumFile = s
	return nil
}
