// SPDX-License-Identifier: MIT

package main

import (
	"fmt"
	"runtime"
)

// --checksum's scenarios (-only sum): the hash made in the copy's pass
// against the copy without it, against the copy followed by sha256sum
// (what scripts do today), and --verify with the hash against --verify
// alone. The manifest goes to standard output (--checksum-file=-), which
// the benchmark reads: the destination directory must hold the copy only.

// The yardsticks of --checksum's own work (integration_test/hashfloor):
// the source hashed once, and twice, with nothing else.
const (
	oneHash   = "sha256 alone (hashfloor 1)"
	twoHashes = "sha256 x2 alone (hashfloor 2)"
)

// fastcpSha256sumTool is a copy, then sha256sum of the copy: a manifest
// the way scripts make one without --checksum.
var fastcpSha256sumTool = tool{name: "fastcp && sha256sum", argv: []string{"sh", "-c",
	`"$0" -- "$1" "$2" && cd "$(dirname "$2")" && sha256sum -- "$(basename "$2")"`, "{fastcp}", "{src}", "{dst}"}}

func checksumScenarios(size int64) []*scenario {
	random := randomFile(size)
	sz := humanSize(size)
	sum := "fastcp --checksum-file=-"
	return []*scenario{
		{
			id:     "sum-ext4",
			title:  fmt.Sprintf("ext4 -> ext4, %s random file, warm cache: --checksum against a copy then sha256sum", sz),
			srcFS:  rootFS,
			dstFS:  rootFS,
			source: random,
			tools:  []tool{fastcpTool("--checksum-file=-"), fastcpTool(), fastcpSha256sumTool},
			targets: []target{
				ratioAtMost(sum, "fastcp && sha256sum", 0.7),
				ratio(sum, "fastcp"),
				peakRSSAtMost(sum, maxRSS),
			},
		},
		{
			id:     "sum-verify",
			title:  fmt.Sprintf("ext4 -> ext4, %s random file, warm cache: --verify --checksum against --verify", sz),
			srcFS:  rootFS,
			dstFS:  rootFS,
			source: random,
			tools: []tool{fastcpTool("--verify", "--checksum"), fastcpTool("--verify"),
				// The two hashes --verify --checksum makes (the source's
				// as copied, the copy's read back), alone.
				{name: twoHashes, yardstick: true, argv: []string{"{hashfloor}", "2", "{src}"}}},
			targets: []target{
				ratioAtMost("fastcp --verify --checksum", "fastcp --verify", 0.8),
				cpuFloor(twoHashes, "fastcp --verify", runtime.NumCPU()),
			},
		},
		{
			id:     "sum-tree-small",
			title:  "ext4 -> tmpfs, a tree of 20000 files of 4 KiB (200 directories), warm cache: -r --checksum against -r",
			srcFS:  rootFS,
			dstFS:  "tmpfs",
			source: treeFiles(20000, 4<<10, 100),
			tools:  []tool{fastcpTool("-r", "--checksum-file=-"), fastcpTool("-r")},
			targets: []target{
				ratioAtMost("fastcp -r --checksum-file=-", "fastcp -r", 1.3),
				peakRSSAtMost("fastcp -r --checksum-file=-", maxRSS),
			},
		},
	}
}

// coldChecksumScenario is the durable cold copy of cold-sync (direct I/O,
// 4 GiB) with and without --checksum: the hash of the ring's buffers must
// keep up with the device.
func coldChecksumScenario() *scenario {
	return &scenario{
		id:     "cold-sum",
		title:  "ext4 -> ext4, 4 GiB random file, cold cache, until on stable storage: --checksum against without",
		srcFS:  rootFS,
		dstFS:  rootFS,
		source: randomFile(coldBytes),
		cold:   true,
		tools: []tool{fastcpTool("--sync=data", "--checksum-file=-"), fastcpTool("--sync=data"),
			// The hash alone, of the source read cold: its user time
			// is what the copy's hash costs one core.
			{name: oneHash, yardstick: true, argv: []string{"{hashfloor}", "1", "{src}"}}},
		targets: []target{
			ratioAtMost("fastcp --sync=data --checksum-file=-", "fastcp --sync=data", 1.1),
			userOver(oneHash, "fastcp --sync=data"),
			cacheGrowthAtMost("fastcp --sync=data --checksum-file=-", 64<<20),
			peakRSSAtMost("fastcp --sync=data --checksum-file=-", maxRSS),
		},
		notes: coldNotes,
	}
}
