// SPDX-License-Identifier: MIT

package cp

// DEST's replacement rule: what happens to an existing DEST, decided from
// what DEST is and the options alone. It is the one place that says when a
// DEST is skipped, refused, replaced, written in place, made anew, kept
// with its data (--attributes-only) or merged into (a directory); the
// callers gather the facts (a stat, an access check, a symbolic link that
// dangles or loops) and carry the decision out. It also says when the copy
// goes to SOURCE's own backup name instead (intoOwnBackup), and so whether
// DEST is backed up at all (app.backups), and what a directory SOURCE does
// with its DEST (decideDir). Whether the data then goes into DEST itself or
// into a temporary file renamed over it is durability's in-place rule
// (durability.WritesInPlace), which decide asks.

import (
	"fastcp/durability"
	"fastcp/flags"
)

// action is what becomes of DEST.
type action int

const (
	actNew             action = iota // no DEST: a temporary file renamed into place
	actReplace                       // a temporary file renamed over DEST, which keeps DEST's mode and owner
	actReplaceAsNew                  // a temporary file renamed over DEST, with the mode a new file gets
	actInPlace                       // DEST itself written
	actSkip                          // DEST left alone, silently
	actFailIsDir                     // "cannot overwrite directory ... with non-directory"
	actFailUnwritable                // "cannot create regular file ...: Permission denied"
	actFailImmutable                 // "cannot remove ...: Operation not permitted"
	actFailJustCreated               // "will not overwrite just-created ... with ..."
	actFailThroughLink               // "will not copy ... through just-created symlink ..."
	actFailNoneFail                  // "not replacing ..." (--update=none-fail)
	actSkipComplete                  // DEST already a complete copy (-r --resume): left alone, it counts as copied
	actFailDangling                  // "not writing through dangling symlink ..."
	actFailLoop                      // "cannot stat ...: Too many levels of symbolic links"
	actFailLinkExists                // "cannot create symbolic link ...: File exists" (--attributes-only)
	actKeepData                      // DEST keeps its data and gets the attributes asked for (--attributes-only)
	actMerge                         // DEST is a directory that a directory SOURCE is copied into
	actFailNotDir                    // "cannot overwrite non-directory ... with directory ..."
)

// destFacts is what the caller found out about DEST.
type destFacts struct {
	kind durability.Kind
	// dangling, loop: DEST is a symbolic link the copy would write
	// through, which names no file, or loops (kind is then none).
	dangling, loop bool
	// notNewer: SOURCE is not newer than DEST (-u skips it).
	notNewer bool
	// unwritable: a regular DEST the user may not write; immutable: one
	// that nobody may write or remove (EPERM).
	unwritable, immutable bool
	// justCreated: DEST is an entry this run made (from another SOURCE);
	// throughLink: it is a symbolic link that the copy would write through.
	justCreated, throughLink bool
	// complete: DEST is a complete copy of SOURCE as -r --resume counts
	// one (completeCopy).
	complete bool
	// newLink: the copy makes a symbolic link (SOURCE is one, copied as
	// a link).
	newLink bool
}

// decideOpts are the options the rule reads.
type decideOpts struct {
	noClobber, update, interactive, force, inPlace, removeDestination bool
	// noneFail: --update=none-fail; backup: -b, DEST is renamed away
	// (kept under its backup name) and replaced.
	noneFail, backup bool
	// resumeTree: -r --resume, which skips a DEST already complete.
	resumeTree bool
	// posixlyCorrect: POSIXLY_CORRECT is set (a dangling symbolic link
	// DEST is written through).
	posixlyCorrect bool
	// attributesOnly: --attributes-only.
	attributesOnly bool
	// data: the copy writes data (a file, or a FIFO or device read as
	// data); otherwise it makes an entry (a link, a special file).
	data bool
}

// decision is the rule's answer: with ask, -i asks first, and "no" skips.
type decision struct {
	ask bool
	act action
}

// intoOwnBackup is cp --force --backup f f, with f a regular file (asked
// last): the copy goes to f's backup name, made without backups, and f
// stays as it is. sameName: one SOURCE, the very operand DEST names, not
// copied into a directory.
func intoOwnBackup(force, backup, sameName bool, regular func() bool) bool {
	return force && backup && sameName && regular()
}

// backups reports whether the run renames an existing DEST away to its
// backup name (-b) before it replaces it.
func (a *app) backups() bool {
	return a.opts.Backup != flags.BackupNone && !a.ownBackup
}

// decide applies cp's rules, in cp's order, to an existing DEST.
func decide(f destFacts, o decideOpts) decision {
	switch {
	case f.loop && o.force:
		// A symlink loop counts as an existing DEST that cannot be
		// opened: -f replaces the link (cp 8.30 and later), whatever
		// -n or -i say.
		return decision{act: actNew}
	case f.loop:
		return decision{act: actFailLoop}
	case f.dangling && o.posixlyCorrect:
		// POSIX: the file the link names is created, a new file, as
		// for cp: -n and -i do not hold it back.
		return decision{act: actNew}
	case f.dangling:
		return decision{act: actFailDangling}
	case f.kind == durability.KindNone:
		return decision{act: actNew}
	case f.kind == durability.KindDir:
		return decision{act: actFailIsDir}
	case o.noClobber:
		return decision{act: actSkip}
	case o.update && f.notNewer:
		return decision{act: actSkip}
	case o.noneFail:
		return decision{act: actFailNoneFail}
	case f.justCreated && f.throughLink && o.data && !o.removeDestination && !o.backup:
		return decision{act: actFailThroughLink}
	case f.justCreated:
		return decision{act: actFailJustCreated}
	case o.resumeTree && o.data && f.complete && f.kind == durability.KindRegular:
		// Copied by the interrupted run this one continues: no question,
		// no copy.
		return decision{act: actSkipComplete}
	}
	d := decision{ask: o.interactive}
	switch {
	case !o.data && f.newLink && o.attributesOnly && !o.removeDestination && !o.backup:
		// cp --attributes-only does not replace a DEST by a link.
		d.act = actFailLinkExists
	case !o.data:
		// A link or a special file is a new entry renamed over DEST.
		d.act = actReplace
	case o.removeDestination, o.backup:
		d.act = actReplaceAsNew
	case o.attributesOnly && (f.kind == durability.KindRegular || f.kind == durability.KindPseudo):
		// cp --attributes-only opens DEST without truncating it: its
		// data stay, it gets the attributes asked for. (An unwritable
		// DEST is not looked for: the open says so.)
		d.act = actKeepData
	case f.kind == durability.KindSymlink:
		// A link that is not written through (a loop under -f): the
		// link itself is replaced by a new file.
		d.act = actReplaceAsNew
	case durability.WritesInPlace(f.kind, o.inPlace):
		d.act = actInPlace
	case f.unwritable && o.force && f.immutable:
		d.act = actFailImmutable
	case f.unwritable && o.force:
		d.act = actReplaceAsNew
	case f.unwritable:
		d.act = actFailUnwritable
	default:
		d.act = actReplace
	}
	return d
}

// decideDir is the rule for a directory SOURCE and what its DEST is
// (f.kind, not followed, or followed under --keep-directory-symlink): a
// directory is merged into, whatever the options; no DEST is made anew;
// anything else is refused.
func decideDir(f destFacts) action {
	switch f.kind {
	case durability.KindNone:
		return actNew
	case durability.KindDir:
		return actMerge
	}
	return actFailNotDir
}
