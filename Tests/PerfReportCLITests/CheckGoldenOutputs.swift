// The golden outputs of CheckOutputTests' scenario: the issue's example line, every status, every format.

/// The golden output of the scenario in every format.
enum GoldenFormat: String, CaseIterable, Sendable {
    case text, github, junit, markdown, json

    var golden: String {
        switch self {
        case .text:
            return #"""
                ✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%
                ? api.list p95 (warn): expected ≤ 800ms (needs n ≥ 100), found 14ms (n=50) · baseline 25ms · -44.0%
                ⚠ api.list max (warn): expected ≤ 20ms, found 30ms (n=50) · baseline 31ms · -3.2% — list pages must stay snappy
                ↓ api.list p50 regression (error): expected within +15% or +2ms of the baseline, found 10ms (n=50) · baseline 20ms · -50.0%
                ✔ 4 checks passed
                · unbudgeted: boot
                perf-report check: fail (1 fail, 1 insufficient, 1 warn, 1 improved, 4 pass, 1 unbudgeted) → exit 1

                """#
        case .github:
            return #"""
                ::error file=App/API.swift,line=88,title=perf%3A api.get p95::✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%25
                ::warning file=App/List.swift,line=12,title=perf%3A api.list p95::? api.list p95 (warn): expected ≤ 800ms (needs n ≥ 100), found 14ms (n=50) · baseline 25ms · -44.0%25
                ::warning file=App/List.swift,line=12,title=perf%3A api.list max::⚠ api.list max (warn): expected ≤ 20ms, found 30ms (n=50) · baseline 31ms · -3.2%25 — list pages must stay snappy
                ::notice file=App/List.swift,line=12,title=perf%3A api.list p50 regression::↓ api.list p50 regression (error): expected within +15%25 or +2ms of the baseline, found 10ms (n=50) · baseline 20ms · -50.0%25

                """#
        case .junit:
            return #"""
                <?xml version="1.0" encoding="UTF-8"?>
                <testsuites name="perf-report check" tests="8" failures="1" errors="0">
                  <testsuite name="perf-report check" tests="8" failures="1" errors="0" skipped="1">
                    <testcase classname="api.get" name="count [spans[0] (&quot;api.*&quot;)]"/>
                    <testcase classname="api.get" name="p95 [spans[0] (&quot;api.*&quot;)]">
                      <failure message="✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%" type="fail">✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%</failure>
                    </testcase>
                    <testcase classname="api.get" name="p50 regression [spans[0] (&quot;api.*&quot;)]"/>
                    <testcase classname="api.list" name="count [spans[0] (&quot;api.*&quot;)]"/>
                    <testcase classname="api.list" name="p95 [spans[0] (&quot;api.*&quot;)]">
                      <skipped message="? api.list p95 (warn): expected ≤ 800ms (needs n ≥ 100), found 14ms (n=50) · baseline 25ms · -44.0%"/>
                    </testcase>
                    <testcase classname="api.list" name="max [spans[1] (&quot;api.list&quot;)]">
                      <system-out>⚠ api.list max (warn): expected ≤ 20ms, found 30ms (n=50) · baseline 31ms · -3.2% — list pages must stay snappy</system-out>
                    </testcase>
                    <testcase classname="api.list" name="p50 regression [spans[1] (&quot;api.list&quot;)]">
                      <system-out>↓ api.list p50 regression (error): expected within +15% or +2ms of the baseline, found 10ms (n=50) · baseline 20ms · -50.0%</system-out>
                    </testcase>
                    <testcase classname="hangs" name="count [hangs]"/>
                  </testsuite>
                </testsuites>

                """#
        case .markdown:
            return #"""
                ## perf-report check: ✘ fail (exit 1)

                | | Check | Level | Expected | Found | n | Baseline | Change |
                |---|---|---|---|---|---|---|---|
                | ✘ fail | `api.get p95` | error | ≤ 800ms | 912ms | 240 | 798ms | +14.3% |
                | ? insufficient | `api.list p95` | warn | ≤ 800ms (needs n ≥ 100) | 14ms | 50 | 25ms | -44.0% |
                | ⚠ warn | `api.list max` | warn | ≤ 20ms | 30ms | 50 | 31ms | -3.2% |
                | | ↳ list pages must stay snappy | | | | | | |
                | ↓ improved | `api.list p50 regression` | error | within +15% or +2ms of the baseline | 10ms | 50 | 20ms | -50.0% |

                <details><summary>4 checks passed</summary>

                | | Check | Level | Expected | Found | n | Baseline | Change |
                |---|---|---|---|---|---|---|---|
                | ✔ pass | `api.get count` | error | ≥ 1 | 240 | 240 | 240 | +0.0% |
                | ✔ pass | `api.get p50 regression` | error | within +15% or +2ms of the baseline | 100ms | 240 | 100ms | +0.0% |
                | ✔ pass | `api.list count` | error | ≥ 1 | 50 | 50 | 50 | +0.0% |
                | ✔ pass | `hangs count` | error | ≤ 0 | 0 |  | 0 | +0 |

                </details>

                Unbudgeted spans: `boot`

                """#
        case .json:
            return #"""
                {"baseline":"base.json","checks":[{"baseline":240,"budget":"≥ 1","current":240,"delta":0,"deltaPercent":0,"kind":"limit","level":"error","line":"✔ api.get count (error): expected ≥ 1, found 240 (n=240) · baseline 240 · +0.0%","message":null,"metric":"count","n":240,"rule":"spans[0] (\"api.*\")","site":{"file":"App/API.swift","line":88},"span":"api.get","status":"pass","unit":"count"},{"baseline":798,"budget":"≤ 800ms","current":912,"delta":114,"deltaPercent":14.285714285714285,"kind":"limit","level":"error","line":"✘ api.get p95 (error): expected ≤ 800ms, found 912ms (n=240) · baseline 798ms · +14.3%","message":null,"metric":"p95","n":240,"rule":"spans[0] (\"api.*\")","site":{"file":"App/API.swift","line":88},"span":"api.get","status":"fail","unit":"milliseconds"},{"baseline":100,"budget":"within +15% or +2ms of the baseline","current":100,"delta":0,"deltaPercent":0,"kind":"regression","level":"error","line":"✔ api.get p50 regression (error): expected within +15% or +2ms of the baseline, found 100ms (n=240) · baseline 100ms · +0.0%","message":null,"metric":"p50","n":240,"rule":"spans[0] (\"api.*\")","site":{"file":"App/API.swift","line":88},"span":"api.get","status":"pass","unit":"milliseconds"},{"baseline":50,"budget":"≥ 1","current":50,"delta":0,"deltaPercent":0,"kind":"limit","level":"error","line":"✔ api.list count (error): expected ≥ 1, found 50 (n=50) · baseline 50 · +0.0%","message":null,"metric":"count","n":50,"rule":"spans[0] (\"api.*\")","site":{"file":"App/List.swift","line":12},"span":"api.list","status":"pass","unit":"count"},{"baseline":25,"budget":"≤ 800ms (needs n ≥ 100)","current":14,"delta":-11,"deltaPercent":-44,"kind":"limit","level":"warn","line":"? api.list p95 (warn): expected ≤ 800ms (needs n ≥ 100), found 14ms (n=50) · baseline 25ms · -44.0%","message":null,"metric":"p95","n":50,"rule":"spans[0] (\"api.*\")","site":{"file":"App/List.swift","line":12},"span":"api.list","status":"insufficient","unit":"milliseconds"},{"baseline":31,"budget":"≤ 20ms","current":30,"delta":-1,"deltaPercent":-3.225806451612903,"kind":"limit","level":"warn","line":"⚠ api.list max (warn): expected ≤ 20ms, found 30ms (n=50) · baseline 31ms · -3.2% — list pages must stay snappy","message":"list pages must stay snappy","metric":"max","n":50,"rule":"spans[1] (\"api.list\")","site":{"file":"App/List.swift","line":12},"span":"api.list","status":"warn","unit":"milliseconds"},{"baseline":20,"budget":"within +15% or +2ms of the baseline","current":10,"delta":-10,"deltaPercent":-50,"kind":"regression","level":"error","line":"↓ api.list p50 regression (error): expected within +15% or +2ms of the baseline, found 10ms (n=50) · baseline 20ms · -50.0%","message":null,"metric":"p50","n":50,"rule":"spans[1] (\"api.list\")","site":{"file":"App/List.swift","line":12},"span":"api.list","status":"improved","unit":"milliseconds"},{"baseline":null,"budget":"no rule matches","current":1,"delta":null,"deltaPercent":null,"kind":"presence","level":"off","line":"· boot: unbudgeted (n=1)","message":null,"metric":"","n":1,"rule":null,"site":{"file":"App/Main.swift","line":3},"span":"boot","status":"unbudgeted","unit":"count"},{"baseline":0,"budget":"≤ 0","current":0,"delta":0,"deltaPercent":null,"kind":"limit","level":"error","line":"✔ hangs count (error): expected ≤ 0, found 0 · baseline 0 · +0","message":null,"metric":"count","n":null,"rule":"hangs","site":null,"span":"hangs","status":"pass","unit":"count"}],"command":"check","exitCode":1,"failOnImprovement":false,"reports":["head.json"],"schema":"perf-verdict","schemaVersion":1,"summary":{"fail":1,"improved":1,"insufficient":1,"pass":4,"unbudgeted":1,"warn":1},"verdict":"fail","warnings":[]}

                """#
        }
    }
}
