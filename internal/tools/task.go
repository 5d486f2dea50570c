package tools

import (
	"context"
	"sync"
)

// DefaultTask is the task id of calls whose surface set none (a Go program
// calling the registry directly, spec §B1: task id defaults to "default").
const DefaultTask = "default"

type taskKey struct{}

// WithTask returns ctx carrying task as the task id (request data, not a
// dependency: STYLE house rule 10).
func WithTask(ctx context.Context, task string) context.Context {
	return context.WithValue(ctx, taskKey{}, task)
}

// TaskID returns the task id Registry.Call put in ctx, or DefaultTask.
func TaskID(ctx context.Context) string {
	if s, ok := ctx.Value(taskKey{}).(string); ok && s != "" {
		return s
	}
	return DefaultTask
}

// OnTaskEnd registers fn to run when a task ends (Registry.EndTask): release
// the task's browser sessions, drop its bindings. fn runs synchronously in
// EndTask's goroutine, once per ended task, and must not call EndTask.
func (r *Registry) OnTaskEnd(fn func(task string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks = append(r.hooks, fn)
}

// EndTask runs every OnTaskEnd hook for task, in registration order. The
// surfaces call it when the task's owner goes away: the MCP server when a
// session closes or its idle timeout expires, the CLI and the Go package on
// Close. Ending a task twice runs the hooks once; a later call in the same
// task id starts it afresh (its state is created again on demand).
func (r *Registry) EndTask(task string) {
	r.mu.Lock()
	if r.ended[task] {
		r.mu.Unlock()
		return
	}
	r.ended[task] = true
	hooks := append([]func(string){}, r.hooks...)
	r.mu.Unlock()
	for _, fn := range hooks {
		fn(task)
	}
}

// started marks task as live again (a call arrived after EndTask).
func (r *Registry) started(task string) {
	r.mu.Lock()
	delete(r.ended, task)
	r.mu.Unlock()
}

// TaskState is per-task state of one kind (e.g. a tool's browser sessions),
// keyed by task id and released when the task ends. A task can only reach
// its own entry: Get takes the task id from the Call, never from tool input.
// Safe for concurrent use.
type TaskState[T any] struct {
	mu      sync.Mutex
	m       map[string]T
	release func(task string, v T)
}

// NewTaskState returns a TaskState whose entries are released with release
// (may be nil) when their task ends; it registers itself with r.OnTaskEnd.
func NewTaskState[T any](r *Registry, release func(task string, v T)) *TaskState[T] {
	s := &TaskState[T]{m: map[string]T{}, release: release}
	r.OnTaskEnd(s.drop)
	return s
}

// Get returns the task's entry, creating it with create (under the lock; keep
// it cheap) when absent.
func (s *TaskState[T]) Get(task string, create func() T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[task]
	if !ok {
		v = create()
		s.m[task] = v
	}
	return v
}

// Peek returns the task's entry, if any, without creating it.
func (s *TaskState[T]) Peek(task string) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[task]
	return v, ok
}

// Len returns the number of live entries.
func (s *TaskState[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *TaskState[T]) drop(task string) {
	s.mu.Lock()
	v, ok := s.m[task]
	delete(s.m, task)
	s.mu.Unlock()
	if ok && s.release != nil {
		s.release(task, v)
	}
}
