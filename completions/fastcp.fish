# SPDX-License-Identifier: MIT

# fish completion for fastcp(1).
# Installed as $(PREFIX)/share/fish/vendor_completions.d/fastcp.fish.

# --preserve and --reflink take an optional value, which must follow '='
# ("--reflink always" would make "always" an operand): their values are
# completed only in the "--opt=VALUE" form, as whole tokens.
function __fastcp_optional_value --argument-names opt
    set -l tok (commandline -ct)
    string match -q -- "--$opt=*" $tok
end

function __fastcp_preserve_values
    set -l tok (commandline -ct)
    set -l list (string replace -- '--preserve=' '' $tok)
    # Complete the word after the last comma, without repeating a word.
    set -l done (string split , -- $list)
    set -e done[-1]
    set -l prefix --preserve=
    if test (count $done) -gt 0
        set prefix --preserve=(string join , -- $done),
    end
    for w in mode timestamps ownership links context xattr all
        contains -- $w $done; or printf '%s%s\n' $prefix $w
    end
end

complete -c fastcp -f

# Copying
complete -c fastcp -s r -l recursive -d 'Copy directories recursively'
complete -c fastcp -s R -d 'Copy directories recursively (same as -r)'
complete -c fastcp -s a -l archive -d 'Same as -r -P --preserve=all'
complete -c fastcp -s p -d 'Same as --preserve=mode,ownership,timestamps'
complete -c fastcp -l preserve -d 'Keep the attributes in LIST (default mode,ownership,timestamps)'
complete -c fastcp -n '__fastcp_optional_value preserve' -a '(__fastcp_preserve_values)'
complete -c fastcp -s t -l target-directory -x -a '(__fish_complete_directories)' -d 'Copy all SOURCEs into DIRECTORY'
complete -c fastcp -s T -l no-target-directory -d 'Treat DEST as a normal file'
complete -c fastcp -s L -l dereference -d 'Always follow symbolic links in SOURCE'
complete -c fastcp -s P -l no-dereference -d 'Never follow symbolic links in SOURCE'
complete -c fastcp -s H -d 'Follow symbolic links named on the command line'
complete -c fastcp -s d -d 'Same as --no-dereference --preserve=links'
complete -c fastcp -l no-preserve -x -d 'Do not keep the attributes in LIST' -a 'mode timestamps ownership links context xattr all'
complete -c fastcp -l attributes-only -d 'Copy the attributes, not the data'
complete -c fastcp -l parents -d 'Use the full source file name under DIRECTORY'
complete -c fastcp -l strip-trailing-slashes -d 'Remove trailing slashes from each SOURCE'
complete -c fastcp -s l -l link -d 'Make hard links instead of copying'
complete -c fastcp -s s -l symbolic-link -d 'Make symbolic links instead of copying'
complete -c fastcp -l copy-contents -d 'Copy the contents of special files when recursive'
complete -c fastcp -l keep-directory-symlink -d 'Follow existing symlinks to directories in DEST'
complete -c fastcp -s x -l one-file-system -d 'Stay on this file system'
complete -c fastcp -s Z -l context -d 'SELinux context (ignored without SELinux)'
complete -c fastcp -s u -d 'Same as --update=older'
complete -c fastcp -l update -d 'Which existing DESTs are replaced: all, none, none-fail, older'
complete -c fastcp -n '__fastcp_optional_value update' -a '
    --update=all\t"Replace every existing DEST"
    --update=none\t"Replace none, silently (as -n)"
    --update=none-fail\t"Replace none, and fail for each"
    --update=older\t"Replace only a DEST older than SOURCE"'
complete -c fastcp -l remove-destination -d 'Remove each existing DEST before writing'
complete -c fastcp -s b -l backup -d 'Back up each existing DEST'
complete -c fastcp -n '__fastcp_optional_value backup' -a '
    --backup=none --backup=off --backup=numbered --backup=t
    --backup=existing --backup=nil --backup=simple --backup=never'
complete -c fastcp -s S -l suffix -x -d 'Backup suffix (implies --backup)'
complete -c fastcp -l strategy -x -d 'Copy mechanism' -a '
    auto\t"Try every strategy in order, falling back when refused"
    reflink\t"FICLONE/FICLONERANGE: share the source\'s extents"
    copy_file_range\t"Copy inside the kernel with copy_file_range(2)"
    direct\t"O_DIRECT on both files, past the page cache"
    sendfile\t"Copy inside the kernel with sendfile(2)"
    splice\t"splice(2) through a pipe sized with F_SETPIPE_SZ"
    rw\t"Read/write loop (--buffer-size)"'
complete -c fastcp -l reflink -d 'Share extents: auto, always (bare --reflink), never'
complete -c fastcp -n '__fastcp_optional_value reflink' -a '
    --reflink=auto\t"Clone when the filesystem can, else copy"
    --reflink=always\t"Clone or fail"
    --reflink=never\t"Never share extents (no FICLONE, no copy_file_range)"'
complete -c fastcp -l sparse -x -d 'What becomes of holes' -a '
    auto\t"Keep the source\'s holes"
    always\t"Also turn zero blocks into holes"
    never\t"Write every byte"'
complete -c fastcp -l buffer-size -x -d 'Buffer of the rw loop (K, M, G, T suffixes)' -a '64K 256K 1M 4M 16M'
complete -c fastcp -s j -l jobs -x -d 'Copy up to N files at once' -a '1 2 4 8'

# Safety
complete -c fastcp -s f -l force -d 'If an existing DEST cannot be opened, remove it and try again'
complete -c fastcp -s n -l no-clobber -d 'Do not overwrite an existing file'
complete -c fastcp -s i -l interactive -d 'Prompt before overwrite'
complete -c fastcp -l inplace -d 'Write straight into DEST instead of a temporary file'

# Durability
complete -c fastcp -l sync -x -d 'How the copy is made durable' -a '
    none\t"No flush (like cp)"
    data\t"fdatasync the file, fsync its directory"
    full\t"fsync the file and its directory"
    osync\t"Open with O_SYNC, fsync at the end"
    odsync\t"Open with O_DSYNC, fdatasync at the end"'
complete -c fastcp -l nocache -d 'Drop source and destination pages from the page cache'
complete -c fastcp -l verify -d 'Read DEST back past the page cache and compare checksums'
complete -c fastcp -n '__fastcp_optional_value verify' -a '
    --verify=dest\t"Read DEST back (as a bare --verify)"
    --verify=source\t"Read SOURCE again too"'

# Checksums
complete -c fastcp -l checksum -d 'Hash every file in the same pass as the copy (sha256, sha512)'
complete -c fastcp -n '__fastcp_optional_value checksum' -a '
    --checksum=sha256\t"SHA-256, as sha256sum (the default)"
    --checksum=sha512\t"SHA-512, as sha512sum"'
complete -c fastcp -l checksum-file -r -F -d 'Write the hashes as sha256sum writes them (- for standard output)'
complete -c fastcp -l resume -d 'Continue an interrupted copy to the same DEST from its last checkpoint'

# Output
complete -c fastcp -s v -l verbose -d "Print 'SRC' -> 'DST' for every file"
complete -c fastcp -l debug -d 'Explain how every file is copied'
complete -c fastcp -s q -l quiet -d 'No progress bar, no warnings'
complete -c fastcp -l progress -d 'Show progress even when stderr is not a terminal (bar, json)'
complete -c fastcp -n '__fastcp_optional_value progress' -a '
    --progress=bar\t"A bar on a terminal, a plain line a second elsewhere"
    --progress=json\t"One JSON object a line, a second apart"'
complete -c fastcp -l no-progress -d 'Never draw the progress bar'
complete -c fastcp -s h -l help -d 'Show the help and exit'
complete -c fastcp -l version -d 'Print the version and exit'

# Benchmark
complete -c fastcp -l benchmark -d "Time every strategy on DIRECTORY's filesystem"
complete -c fastcp -l bench-size -x -d "Size of the benchmark's test file" -a '64M 256M 1G'
complete -c fastcp -l bench-runs -x -d 'Timed runs per row' -a '1 3 5'
complete -c fastcp -l bench-from -x -a '(__fish_complete_directories)' -d "Put the benchmark's source file in DIR"
complete -c fastcp -l json -d 'With --benchmark, print one JSON document'

# Operands: files, or with --benchmark the directory to measure.
complete -c fastcp -n 'not __fish_seen_argument -l benchmark; and not __fastcp_optional_value reflink; and not __fastcp_optional_value preserve' -F
complete -c fastcp -n '__fish_seen_argument -l benchmark' -x -a '(__fish_complete_directories)'
