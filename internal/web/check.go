package web

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
)

// CheckResult is gate.CheckResult: the verdict of the gates on one URL, as
// printed by `gatehouse check --json`.
type CheckResult = gate.CheckResult

// CheckMode is gate.CheckMode: which tool's rules CheckURL applies.
type CheckMode = gate.CheckMode

// CheckURL is gate.CheckURL (the one-URL verdict shared with the browser
// tools; see there for the order of the gates).
func CheckURL(ctx context.Context, guard *egress.Guard, pol *policy.Policy, raw string, mode CheckMode) CheckResult {
	return gate.CheckURL(ctx, guard, pol, raw, mode)
}
