// SPDX-License-Identifier: MIT

package fsfixture

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// nrHugePages is the kernel's pool of huge pages (root may write it).
const nrHugePages = "/proc/sys/vm/nr_hugepages"

// ReserveHugePages makes the kernel's pool of huge pages hold at least
// bytes of free ones (growing vm.nr_hugepages, as root), for fio's
// --mem=shmhuge: a request of 4 KiB pages is a list of segments, of which
// a device takes a bounded number (virtio: 254), so fio's 4 MiB requests
// from ordinary memory are split, and its limit reads up to 1.5x too slow.
// restore puts the pool back as it was. An error says why the pages
// could not be had (not root, no huge pages, memory too fragmented).
func ReserveHugePages(bytes int64) (restore func() error, err error) {
	info, err := hugeInfo()
	if err != nil {
		return nil, err
	}
	size := info["Hugepagesize"] << 10
	if size <= 0 {
		return nil, fmt.Errorf("no huge pages in /proc/meminfo")
	}
	need := (bytes + size - 1) / size
	free := info["HugePages_Free"]
	if free >= need {
		return func() error { return nil }, nil
	}
	b, err := os.ReadFile(nrHugePages)
	if err != nil {
		return nil, err
	}
	old, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", nrHugePages, err)
	}
	restore = func() error { return os.WriteFile(nrHugePages, []byte(strconv.FormatInt(old, 10)), 0o644) }
	if err := os.WriteFile(nrHugePages, []byte(strconv.FormatInt(old+need-free, 10)), 0o644); err != nil {
		return nil, err
	}
	if info, err = hugeInfo(); err != nil || info["HugePages_Free"] < need {
		restore()
		return nil, fmt.Errorf("the kernel gave %d of the %d huge pages asked for (memory too fragmented?)", info["HugePages_Free"], need)
	}
	return restore, nil
}

// hugeInfo reads the huge page counts of /proc/meminfo (Hugepagesize in
// kB, the others in pages).
func hugeInfo() (map[string]int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(k, "Huge") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err == nil {
			m[k] = n
		}
	}
	return m, sc.Err()
}
