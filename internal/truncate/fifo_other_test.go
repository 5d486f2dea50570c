//go:build !unix

package truncate

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs") }
