// SPDX-License-Identifier: MIT

package output

import "fmt"

// A tree's totals are counted while it is copied (a scan runs ahead of the
// copy): until the count ends the bar says "counting" where the
// percentage goes, and shows the bytes and files counted so far, marked
// with a "+", with the time elapsed instead of the time left; a status
// line says "counted so far", and --progress=json's totals are -1
// (unknown). A total only grows, and every file adds its size to what is
// done exactly once, whatever became of it (EntryDone), so a bar ends at
// its total.

// CountingTotals says the totals are still being counted: AddTotal adds
// to them, TotalsCounted ends the count.
func (p *Progress) CountingTotals() { p.scanning.Store(true) }

// StartProgressJSONCounting is StartProgressJSON for a run whose totals
// are still being counted (CountingTotals): its start object says them
// unknown.
func (o *Output) StartProgressJSONCounting(total int64, files int) *Progress {
	p := o.newProgress(total, files)
	p.CountingTotals()
	return o.startJSON(p)
}

// AddTotal adds bytes and files counted to the totals.
func (p *Progress) AddTotal(bytes, files int64) {
	p.total.Add(bytes)
	p.filesTotal.Add(files)
}

// TotalsCounted says the totals are complete.
func (p *Progress) TotalsCounted() { p.scanning.Store(false) }

// TotalsDone ends a count that the copy outran: once everything is done,
// what is done is the totals.
func (p *Progress) TotalsDone() {
	if p.scanning.Load() {
		p.total.Store(max(p.total.Load(), p.done.Load()))
		p.filesTotal.Store(max(p.filesTotal.Load(), p.files.Load()))
		p.scanning.Store(false)
	}
}

// TotalsUnknown says the run's totals will not be known (a tree that no
// scan counts, as when nothing is drawn): what is done is shown alone.
func (p *Progress) TotalsUnknown() {
	p.total.Store(-1)
	p.filesTotal.Store(-1)
}

// EntryDone counts a file of size bytes as done, the copier having counted
// counted of them already (fewer when it failed, or was skipped or linked
// instead of copied, and then none).
func (p *Progress) EntryDone(size, counted int64) {
	if size > counted {
		p.done.Add(size - counted)
	}
	p.files.Add(1)
}

// AddDone counts files, and their bytes, as done without a copy: a tree
// left out.
func (p *Progress) AddDone(bytes, files int64) {
	p.done.Add(bytes)
	p.files.Add(files)
}

// countingTotals shows what is done beside what is counted so far: a
// total that the copy has passed (it went faster than the count) is
// shown as what is done, so that it never goes back.
func (s *lineState) countingTotals() {
	s.total = max(s.total, s.done)
	s.filesTotal = max(s.filesTotal, s.files)
}

// countingPlain is the plain line's totals while counting.
func (s *lineState) countingPlain() string {
	line := fmt.Sprintf(" of %s+ (counting)", Size(s.total))
	if s.rate > 0 {
		line += ", " + Rate(s.rate)
	}
	return line + fmt.Sprintf(", %d/%d+ files", s.files, s.filesTotal)
}

// countingParts are the bar's parts while counting.
func (s *lineState) countingParts(text *[numParts]string) {
	text[partPercent] = "counting"
	text[partBytes] = Size(s.done) + "/" + Size(s.total) + "+"
	text[partTime] = clock(int64(s.elapsed.Seconds()))
	text[partFiles] = fmt.Sprintf("%d/%d+ files", s.files, s.filesTotal)
}

// countingStatus is the status line's counts while counting: "12345 of
// 67890 bytes counted so far (12 KiB of 66.2 KiB), 3 of 50 files counted
// so far, 1.2 MB/s, 0s elapsed".
func (s *lineState) countingStatus() string {
	return fmt.Sprintf(": %d of %d bytes counted so far (%s of %s), %d of %d files counted so far, %s, %s elapsed",
		s.done, s.total, Size(s.done), Size(s.total), s.files, s.filesTotal, Rate(s.rate), clock(int64(s.elapsed.Seconds())))
}
