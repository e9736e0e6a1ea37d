// SPDX-License-Identifier: MIT

package flags

import "strings"

// Help returns the --help text for a program run as prog.
func Help(prog string) string {
	return strings.ReplaceAll(helpText, "PROG", prog)
}

const helpText = `Usage: PROG [OPTION]... SOURCE DEST
  or:  PROG [OPTION]... SOURCE... DIRECTORY
  or:  PROG [OPTION]... -t DIRECTORY SOURCE...
  or:  PROG [OPTION]... -t DIR1 -t DIR2 [-t DIR3]... SOURCE...
  or:  PROG --benchmark [OPTION]... [DIRECTORY]
Copy SOURCE to DEST, or SOURCEs into DIRECTORY, in kernel space where the
kernel allows it. DEST is written to a temporary file and renamed into place
only after the copy succeeded.

Copying:
  -r, -R, --recursive          copy directories recursively
  -a, --archive                same as -dR --preserve=all
  -d                           same as --no-dereference --preserve=links
  -p                           same as --preserve=mode,ownership,timestamps
      --preserve[=LIST]        keep the attributes in LIST: mode, timestamps,
                                 ownership, links, context, xattr, all
                                 (default: mode,ownership,timestamps)
      --no-preserve=LIST       do not keep the attributes in LIST
      --attributes-only        copy the attributes, not the data
  -t, --target-directory=DIR   copy all SOURCEs into DIR; repeated, into
                                 each DIR, reading each SOURCE once
  -T, --no-target-directory    treat DEST as a normal file
      --parents                use the full source file name under DIRECTORY
      --strip-trailing-slashes  remove any trailing slashes from each SOURCE
  -L, --dereference            always follow symbolic links in SOURCE
  -P, --no-dereference         never follow symbolic links in SOURCE
  -H                           follow symbolic links named on the command line
  -l, --link                   make hard links instead of copying
  -s, --symbolic-link          make symbolic links instead of copying
      --copy-contents          copy the contents of special files when
                                 recursive
      --keep-directory-symlink  follow existing symlinks to directories
                                 in DEST
  -x, --one-file-system        stay on this file system
  -Z, --context[=CTX]          SELinux context of DEST; without SELinux,
                                 ignored as by cp (--context=CTX warns)
      --strategy=S             auto (default), reflink, copy_file_range,
                                 direct, sendfile, splice, rw; a forced
                                 strategy that is refused is an error
      --reflink[=WHEN]         auto (default), always (bare --reflink), never
      --sparse=WHEN            auto (default: keep holes), always (also turn
                                 zero blocks into holes), never
      --buffer-size=SIZE       buffer of the rw loop (K, M, G, T suffixes)
  -j, --jobs=N                 copy up to N files at once (default 1)

Safety:
  -f, --force                  if an existing DEST cannot be opened, remove
                                 it and try again
  -n, --no-clobber             do not overwrite an existing file (skipping
                                 is not an error)
  -i, --interactive            prompt before overwrite; a "no" is exit 1
  -u                           same as --update=older
      --update[=WHEN]          which existing DESTs are replaced: all,
                                 none (as -n), none-fail (skipping is an
                                 error), older (default: DEST older than
                                 SOURCE)
      --remove-destination     remove each existing DEST before writing
                                 (a symlink DEST is replaced, not followed)
  -b, --backup[=CONTROL]       back up each existing DEST first: none, off;
                                 numbered, t; existing, nil; simple, never
                                 (default: existing, or VERSION_CONTROL)
  -S, --suffix=SUFFIX          backup suffix (default ~, or
                                 SIMPLE_BACKUP_SUFFIX); implies --backup
      --inplace                write straight into DEST (keeps its inode)

Durability:
      --sync=MODE              none (default), data (fdatasync), full (fsync),
                                 osync (O_SYNC), odsync (O_DSYNC); every mode
                                 but none also syncs DEST's directory
      --nocache                drop the pages the copy brings into the page
                                 cache behind it (a source cached before
                                 stays cached)
      --verify[=WHAT]          read DEST back past the page cache and compare
                                 checksums before it replaces the old DEST;
                                 with --checksum, with the hash made during
                                 the copy; --verify=source reads SOURCE
                                 again too
      --resume                 continue an interrupted copy of the same SOURCE
                                 to the same DEST from its last checkpoint
                                 (with -r, skip files already complete);
                                 with nothing to resume, copy as usual

Checksums:
      --checksum[=ALGORITHM]   hash every file's bytes in the same pass as
                                 the copy: sha256 (default), sha512
      --checksum-file=FILE     write the hashes to FILE as sha256sum writes
                                 them (- for standard output), after the last
                                 copy; sha256sum -c checks it; implies
                                 --checksum

Output:
  -v, --verbose                print 'SRC' -> 'DST' for every file
      --debug                  explain how every file is copied (implies -v)
  -q, --quiet                  no progress bar, no warnings
      --progress[=FORMAT]      show progress even when stderr is not a
                                 terminal: bar (bare --progress), json (one
                                 JSON object a line, a second apart)
      --no-progress            never draw the progress bar
  -h, --help                   show this help and exit
      --version                print the version and exit

Benchmark:
      --benchmark              time every strategy on DIRECTORY's filesystem
                                 (default: the current directory)
      --bench-size=SIZE        size of the test file (default 256M)
      --bench-runs=N           timed runs per row (default 3)
      --bench-from=DIR         put the source file in DIR (copies between
                                 two filesystems)
      --json                   print the results as one JSON document

Long options and their WORD arguments may be abbreviated (--verb,
--preserve=mod); a prefix of one of cp's options means it, as in cp.
POSIXLY_CORRECT makes a dangling symlink DEST written through, and
options end at the first operand, as with cp.

SIGUSR1 prints one line saying how far the copy is (as with dd), bar or not.

Exit status: 0 all copied; 1 some file failed, or a usage error (as cp);
killed by SIGINT, SIGTERM, SIGHUP after cleaning up ($? 130, 143, 129).

Examples:
  PROG --sync=data disk.img /mnt/usb/       copy a VM image durably
  PROG -a --checksum-file=/mnt/usb/SHA256SUMS /data/. /mnt/usb
                                            copy a tree and its manifest
  PROG --benchmark /mnt/newdisk             see which strategy wins there
`
