//go:build !linux

package backend

func setSubreaper() {}
