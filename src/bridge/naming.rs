//! The gateway's tools as an agent names them (`mcp__agent-runtime__
//! read_file` for Claude Code) and as providers and the runtime see them
//! (the decision kinds): a request's tools and earlier calls renamed one
//! way, a reply's calls the other. In leashed mode every tool that is not
//! the gateway's is taken out of the request, so the model is never
//! offered one.

use crate::agents::OwnCall;
use crate::decision::KINDS;
use crate::protocol::{Conversation, Reply, Stop, Turn};

/// A decision as a call of a contained agent's own tools.
pub(crate) type OwnCalls =
    std::sync::Arc<dyn Fn(&str, &serde_json::Value) -> Option<OwnCall> + Send + Sync>;

/// One agent's names for the gateway's tools.
#[derive(Clone)]
pub(crate) struct Naming {
    /// (the agent's name, the kind), one per decision kind.
    names: Vec<(String, &'static str)>,
    /// Leashed: only the gateway's tools are offered.
    leashed: bool,
    /// Contained: a reply's decisions become the agent's own calls.
    own: Option<OwnCalls>,
}

impl std::fmt::Debug for Naming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Naming")
            .field("leashed", &self.leashed)
            .field("own", &self.own.is_some())
            .finish_non_exhaustive()
    }
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
            own: None,
        }
    }

    /// Contained: every tool offered, and a reply's decisions (a script's
    /// decision lines) made calls of the agent's own tools by `own`.
    pub(crate) fn contained(name_of: impl Fn(&str) -> String, own: OwnCalls) -> Naming {
        Naming {
            own: Some(own),
            ..Naming::new(name_of, false)
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
        if let Some(own) = &self.own {
            let mut said = Vec::new();
            reply.calls.retain_mut(|call| {
                if !KINDS.iter().any(|spec| spec.kind == call.name) {
                    return true;
                }
                match own(&call.name, &call.input) {
                    Some(OwnCall::Call { name, input }) => {
                        call.name = name;
                        call.input = input;
                        true
                    }
                    Some(OwnCall::Say(text)) => {
                        said.push(text);
                        false
                    }
                    None => true,
                }
            });
            if !said.is_empty() {
                if !reply.text.is_empty() {
                    said.insert(0, reply.text.clone());
                }
                reply.text = said.join("\n");
            }
            if reply.calls.is_empty() {
                reply.stop = Stop::EndTurn;
            }
            return;
        }
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
    use crate::protocol::{Tool, ToolCall};
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
