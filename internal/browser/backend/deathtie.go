package backend

import (
	"context"
	"runtime"

	"github.com/chromedp/chromedp"
)

// deathTie sets what ties Chromium's life to ours (issue 9): Pdeathsig=SIGKILL
// on the exec'd browser process (Linux), so a SIGKILLed owner leaves no
// browser behind. Pdeathsig fires when the *thread* that forked the child
// exits (prctl(2) PR_SET_PDEATHSIG), so the fork happens on a goroutine locked
// to its OS thread for the browser's whole life (startLocked). The CDP pipe
// (chromedp's --remote-debugging-pipe) is the second tie: Chromium exits at
// its EOF. Chromium's children exit when the browser process is gone; the
// orphan reaper (ReapOrphanDirs) handles what survives anyway.
func deathTie() chromedp.ExecAllocatorOption {
	return chromedp.ModifyCmdFunc(setPdeathsig)
}

// startLocked runs the first CDP action (which forks Chromium) on a locked OS
// thread and keeps the thread locked until exited closes (the browser is
// gone), so Pdeathsig is not fired early by the Go runtime retiring the
// thread.
func startLocked(ctx context.Context, started chan<- error, exited <-chan struct{}) {
	runtime.LockOSThread()
	err := chromedp.Do(ctx)
	started <- err
	if err == nil {
		<-exited
	}
	runtime.UnlockOSThread()
}
