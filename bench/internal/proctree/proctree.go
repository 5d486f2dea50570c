// Package proctree reads the Linux process tree under a pid from /proc,
// for the benches' CPU and memory figures (Linux only; elsewhere every sum
// is 0).
package proctree

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Tree is one scan of /proc: each process's children and its CPU time
// (user+system, own and of reaped children, in clock ticks of 10 ms).
type Tree struct {
	kids map[int][]int
	cpu  map[int]int
}

// Scan reads /proc once. Processes that exit during the scan are skipped.
func Scan() Tree {
	t := Tree{kids: map[int][]int{}, cpu: map[int]int{}}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		t.kids[pp] = append(t.kids[pp], pid)
		if len(f) > 15 {
			for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
				n, _ := strconv.Atoi(f[i])
				t.cpu[pid] += n
			}
		}
	}
	return t
}

// Walk calls fn for root and each of its descendants, parents first.
func (t Tree) Walk(root int, fn func(pid int)) {
	fn(root)
	for _, k := range t.kids[root] {
		t.Walk(k, fn)
	}
}

// CPU returns the CPU time (clock ticks) of pid as scanned.
func (t Tree) CPU(pid int) int { return t.cpu[pid] }

// CPUSum sums the CPU time (clock ticks) of root and its descendants.
func CPUSum(root int) int {
	t, total := Scan(), 0
	t.Walk(root, func(p int) { total += t.CPU(p) })
	return total
}

// PSS sums the Proportional Set Size (kB, from smaps_rollup) of root and
// its descendants.
func PSS(root int) int {
	total := 0
	Scan().Walk(root, func(p int) { total += PSSOf(p) })
	return total
}

// PSSOf is the Proportional Set Size (kB, from smaps_rollup) of pid alone;
// 0 when it cannot be read (the process exited).
func PSSOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Pss:") {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}
