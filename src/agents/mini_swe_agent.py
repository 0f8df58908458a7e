"""agent-runtime's driver for mini-swe-agent, loaded by its own `mini`
command as its agent class (`--agent-class agent_runtime_mini.VerifiedAgent`).

It is mini-swe-agent's interactive agent, unattended, with one change:
when the agent submits, the driver asks the runtime (a POST to
`AGENT_RUNTIME_STOPPED_URL`, the model bridge) instead of a person. The
runtime runs the job's verify command; when it fails and rounds are left,
the answer is verify's output, which goes to the same agent object as the
next user message (mini-swe-agent's own "the user added a new task" path),
and the agent steps on with everything it had: its messages, its step and
cost counts. Otherwise the agent ends as it would have.
"""

import json
import os
import urllib.request

from minisweagent.agents.interactive import InteractiveAgent


def ask_runtime() -> str | None:
    """What the runtime says of the agent's stop: verify's output to go on
    with, or None to end."""
    request = urllib.request.Request(
        os.environ["AGENT_RUNTIME_STOPPED_URL"],
        data=b"{}",
        headers={"content-type": "application/json"},
        method="POST",
    )
    # Verify may take as long as the job allows; the runtime ends the
    # whole attempt at its deadline.
    with urllib.request.urlopen(request, timeout=None) as response:
        return json.load(response).get("message")


class VerifiedAgent(InteractiveAgent):
    def _check_for_new_task_or_submit(self, e):
        message = ask_runtime()
        if message:
            self._interrupt(message, itype="VerifyFailed")
        raise e
