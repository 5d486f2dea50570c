package pdftext

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pdfChildLimited: limitSelf works here.
const pdfChildLimited = true

// limitSelf limits this process's address space to what it uses now plus
// mem bytes (RLIMIT_AS; relative, because the race detector and the Go
// runtime reserve large ranges at start) and its CPU time to cpu seconds
// (RLIMIT_CPU: SIGXCPU at cpu, SIGKILL one second later).
func limitSelf(mem int64, cpu int) error {
	now, err := vmSize()
	if err != nil {
		return err
	}
	as := uint64(now + mem)
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("setrlimit RLIMIT_AS: %w", err)
	}
	c := uint64(cpu)
	if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: c, Max: c + 1}); err != nil {
		return fmt.Errorf("setrlimit RLIMIT_CPU: %w", err)
	}
	return nil
}

// vmSize is this process's address space in bytes (/proc/self/status VmSize).
func vmSize() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "VmSize:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
