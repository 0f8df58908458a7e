//! The gateway's tools as an agent names them (`mcp__agent-runtime__
//! read_file` for Claude Code) and as providers and the runtime see them
//! (the decision kinds): a request's tools and earlier calls renamed one
//! way, a reply's calls the other. In leashed mode every tool that is not
//! the gateway's is taken out of the request, so the model is never
//! offered one.

use crate::decision::KINDS;
use crate::protocol::{Conversation, Reply, Turn};

/// One agent's names for the gateway's tools.
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    /// (the agent's name, the kind), one per decision kind.
    names: Vec<(String, &'static str)>,
    /// Leashed: only the gateway's tools are offered.
    leashed: bool,
}

impl Naming {
    /// Names made by `name_of(kind)`.
    pub(crate) fn new(name_of: impl Fn(&str) -> String, leashed: bool) -> Naming {
        Naming {
            names: KINDS
                .iter()
                .map(|spec| (name_of(spec.kind), spec.kind))
                .collect(),
            leashed,
        }
    }

    fn plain(&self, name: &str) -> Option<&'static str> {
        self.names
            .iter()
            .find(|(agent, _)| agent == name)
            .map(|(_, kind)| *kind)
    }

    fn agents(&self, kind: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|(_, k)| *k == kind)
            .map(|(agent, _)| agent.as_str())
    }

    /// The request as the runtime sees it.
    pub(crate) fn to_plain(&self, conversation: &mut Conversation) {
        if self.leashed {
            conversation
                .tools
                .retain(|tool| self.plain(&tool.name).is_some());
        }
        for tool in &mut conversation.tools {
            if let Some(kind) = self.plain(&tool.name) {
                tool.name = kind.to_string();
            }
        }
        for turn in &mut conversation.turns {
            if let Turn::Assistant { calls, .. } = turn {
                for call in calls {
                    if let Some(kind) = self.plain(&call.name) {
                        call.name = kind.to_string();
                    }
                }
            }
        }
    }

    /// The reply as the agent names its tools.
    pub(crate) fn to_agent(&self, reply: &mut Reply) {
        for call in &mut reply.calls {
            if let Some(name) = self.agents(&call.name) {
                call.name = name.to_string();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Stop, Tool, ToolCall};
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.into(),
            description: String::new(),
            schema: json!({}),
        }
    }

    fn call(name: &str) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            input: json!({}),
        }
    }

    #[test]
    fn leashed_only_the_gateway_s_tools_are_offered_and_names_round_trip() {
        let naming = Naming::new(|kind| format!("mcp__agent-runtime__{kind}"), true);
        let mut conversation = Conversation {
            model: "m".into(),
            system: String::new(),
            turns: vec![Turn::Assistant {
                text: String::new(),
                calls: vec![call("mcp__agent-runtime__read_file")],
            }],
            tools: vec![tool("Bash"), tool("mcp__agent-runtime__read_file")],
            stream: true,
            max_tokens: None,
        };
        naming.to_plain(&mut conversation);
        let names: Vec<_> = conversation.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read_file"]);
        assert!(
            matches!(&conversation.turns[0], Turn::Assistant { calls, .. } if calls[0].name == "read_file")
        );
        let mut reply = Reply {
            text: String::new(),
            calls: vec![call("finish"), call("Bash")],
            input_tokens: 0,
            output_tokens: 0,
            stop: Stop::ToolUse,
        };
        naming.to_agent(&mut reply);
        assert_eq!(reply.calls[0].name, "mcp__agent-runtime__finish");
        // An agent's own tool (a scripted `agent_tool` line) keeps its name.
        assert_eq!(reply.calls[1].name, "Bash");
    }

    #[test]
    fn contained_the_agent_s_own_tools_stay_offered() {
        let naming = Naming::new(|kind| format!("mcp__agent-runtime__{kind}"), false);
        let mut conversation = Conversation {
            model: "m".into(),
            system: String::new(),
            turns: Vec::new(),
            tools: vec![tool("Bash")],
            stream: false,
            max_tokens: None,
        };
        naming.to_plain(&mut conversation);
        assert_eq!(conversation.tools.len(), 1);
    }
}
