//go:build !linux

package backend

import "os/exec"

func setSubreaper() {}

func setPdeathsig(*exec.Cmd) {}
