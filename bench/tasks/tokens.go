package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenCounter counts the tokens of a text the agent reads.
type tokenCounter interface{ count(string) int }

// charCounter approximates tokens as chars/4 (the CI version, without Node).
type charCounter struct{}

func (charCounter) count(s string) int { return (len([]rune(s)) + 3) / 4 }

// nodeTokenizer is one Node process running tokens.mjs (o200k_base from npm
// gpt-tokenizer): one JSON string per line in, one count per line out.
type nodeTokenizer struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startTokenizer(script string) (*nodeTokenizer, error) {
	c := exec.Command("node", script)
	in, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t := &nodeTokenizer{cmd: c, in: in, out: bufio.NewReader(out)}
	if t.count("hello world") <= 0 {
		t.close()
		return nil, fmt.Errorf("tokenizer %s does not answer", script)
	}
	return t, nil
}

func (t *nodeTokenizer) count(s string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	js, _ := json.Marshal(s)
	t.in.Write(append(js, '\n'))
	line, err := t.out.ReadString('\n')
	if err != nil {
		return -1
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line))
	return n
}

func (t *nodeTokenizer) close() {
	t.in.Close()
	t.cmd.Wait()
}

func mcpCall(tool string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: args}
}
