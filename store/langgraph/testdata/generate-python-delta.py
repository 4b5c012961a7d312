"""Throwaway LangGraph Python program (see README.md): a DeltaChannel
conversation (LangGraph Python 1.2's langgraph.channels.delta) and LangGraph's
own answer for every checkpoint, in the shape generate-python-cases.py records.

    python generate-python-delta.py OUT.db OUT.json.gz
"""
import gzip, importlib.util, json, os, sys
from typing import Annotated
from typing_extensions import TypedDict
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph, START, END
from langgraph.graph.message import _messages_delta_reducer

# The answers' shape (snap, record, run) is generate-python-cases.py's.
_spec = importlib.util.spec_from_file_location(
    "cases", os.path.join(os.path.dirname(os.path.abspath(__file__)), "generate-python-cases.py"))
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

TURNS = 230  # a snapshot every 100 updates: crosses two, and writes since


# t-delta: one AI message a superstep, then a second human turn and an
# update_state, as generate-cases.mjs's t-delta for LangGraph.js.
class DeltaState(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=100)]


def agent(s: DeltaState):
    n = len(s["messages"])
    return {"messages": [AIMessage(content=f"reply {n}", id=f"ai-{n}")]}


delta = StateGraph(DeltaState)
delta.add_node("agent", agent)
delta.add_edge(START, "agent")
delta.add_conditional_edges(
    "agent", lambda s: END if len(s["messages"]) % 120 == 0 or len(s["messages"]) >= TURNS else "agent",
    ["agent", END])


def run(g, inp, cfg, names):
    for ev in g.stream(inp, cfg, stream_mode="tasks", durability="sync"):
        if "input" in ev:
            names[ev["id"]] = ev["name"]


def scenario(saver):
    g = delta.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t-delta"}, "recursion_limit": 1000}
    # durability="sync": each checkpoint saved before the next step (the default
    # "async" deadlocked here after 5 checkpoints: each save waits in a pool
    # worker for the DeltaChannel writes queued behind it on the same pool)
    names = {}
    run(g, {"messages": [HumanMessage(content="hello", id="h-1")]}, cfg, names)
    run(g, {"messages": [HumanMessage(content="go on", id="h-2")]}, cfg, names)
    g.update_state(cfg, {"messages": [HumanMessage(content="an edit", id="h-edit")]})
    return {"t-delta": cases.record(g, "t-delta", names)}


if __name__ == "__main__":
    db, answers = sys.argv[1], sys.argv[2]
    with SqliteSaver.from_conn_string(db) as saver:
        threads = scenario(saver)
    text = json.dumps({"threads": threads}, indent=1) + "\n"
    with open(answers, "wb") as f:
        f.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    for t, r in threads.items():
        print(t, len(r["history"]), "checkpoints,", len(r["state"]["values"]["messages"]), "messages")
