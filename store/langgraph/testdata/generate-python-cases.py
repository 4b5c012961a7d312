"""Throwaway LangGraph Python program (see README.md): threads rewind's reader
must show as LangGraph shows them, and LangGraph's own answer for every
checkpoint of each (get_state_history, get_state), recorded beside the database
in the shape generate-cases.mjs records LangGraph.js's.

    python generate-python-cases.py OUT.db OUT.json.gz
    python generate-python-cases.py --async OUT.db OUT.json.gz

--async writes the same threads through AsyncSqliteSaver (aiosqlite), with
astream, aget_state_history and aget_state; --postgres through PostgresSaver
(psycopg 3) into URL, an empty database, dumped afterwards with pg_dump.

    python generate-python-cases.py --postgres URL OUT.json.gz

--values writes t-bigint, t-nan (and t-pickle) through SqliteSaver, and
--encrypted t-encrypted through an EncryptedSerializer (LANGGRAPH_AES_KEY set):
values JSON cannot hold exactly, recorded as {"$int": "decimal"} and
{"$float": "NaN" | "Infinity" | "-Infinity"}, each checkpoint's metadata
beside its values.

    python generate-python-cases.py --values OUT.db OUT.json.gz
    python generate-python-cases.py --postgres-values URL OUT.json.gz  (t-bigint)
    LANGGRAPH_AES_KEY=… python generate-python-cases.py --encrypted OUT.db OUT.json.gz
"""
import asyncio, gzip, json, math, operator, sys, time
from typing import Annotated
from typing_extensions import TypedDict
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.func import entrypoint, task
from langgraph.graph import StateGraph, START, END
from langgraph.types import Command, interrupt


# t-func: the functional API; `double` runs twice with different arguments
# (each call's task id is its own), an interrupt between them, a resume.
@task
def double(x: int) -> int:
    return x * 2


@task
def describe(a: int, b: int) -> str:
    return f"{a} then {b}"


def flow(saver):
    @entrypoint(checkpointer=saver)
    def flow(inp: dict) -> dict:
        a = double(inp["n"]).result()
        ok = interrupt({"question": "keep going?", "a": a})
        b = double(a).result()
        return {"a": a, "b": b, "ok": ok, "text": describe(a, b).result()}
    return flow


# t-update: Command(update=…) given to a thread stopped at interrupt(): the
# update is the null task's writes, which get_state applies.
class UpdState(TypedDict, total=False):
    topic: str
    notes: Annotated[list[str], operator.add]
    answer: str


def ask(s: UpdState):
    return {"answer": interrupt({"question": f"about {s['topic']}?"}), "notes": ["asked"]}


upd = StateGraph(UpdState)
upd.add_node("ask", ask)
upd.add_edge(START, "ask")
upd.add_edge("ask", END)


# t-parallel: three branches in one superstep, one raises: the others' writes
# stay behind as pending writes, which get_state applies.
class ParState(TypedDict, total=False):
    done: Annotated[list[str], operator.add]


def branch(name, fail=False):
    def run(s: ParState):
        if fail:
            time.sleep(0.5)  # the others finish first: their writes stay behind
            raise ValueError(f"{name} broke")
        return {"done": [name]}
    return run


par = StateGraph(ParState)
par.add_node("start", lambda s: {"done": ["in"]})
for n, f in (("ok1", False), ("bad", True), ("ok2", False)):
    par.add_node(n, branch(n, f))
    par.add_edge("start", n)
    par.add_edge(n, END)
par.add_edge(START, "start")


def plain(v):
    """A value as JSON the Go test reads: a message as its type, id and content."""
    if isinstance(v, BaseMessage):
        return {"$message": {"type": v.type, "id": v.id, "content": v.content}}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53:
        return {"$int": str(v)}  # past a float64's exact integers
    if isinstance(v, float) and not math.isfinite(v):
        return {"$float": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    if not isinstance(v, (str, int, float, bool, type(None))):
        return {"$repr": repr(v)}  # t-pickle's Plain
    return v


def snap(s):
    parent = (s.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    return {
        "checkpoint_id": s.config["configurable"]["checkpoint_id"],
        "checkpoint_ns": s.config["configurable"].get("checkpoint_ns", ""),
        "parent_id": parent,
        "values": plain(s.values),
        "next": list(s.next),
        "tasks": [{"id": t.id, "name": t.name, "error": str(t.error) if t.error else None,
                   "interrupts": plain([i.value for i in t.interrupts])} for t in s.tasks],
        "interrupts": plain([i.value for i in s.interrupts]),
        "source": (s.metadata or {}).get("source"),
        "step": (s.metadata or {}).get("step"),
        **({"metadata": plain(s.metadata)} if WITH_METADATA else {}),
    }


WITH_METADATA = False


def run(g, inp, cfg, names):
    """g.invoke, noting the id and name of every task LangGraph starts
    (stream_mode="tasks": the functional API's task calls too, which
    get_state does not list)."""
    for ev in g.stream(inp, cfg, stream_mode="tasks"):
        if "input" in ev:
            names[ev["id"]] = ev["name"]


def record(g, thread, names):
    cfg = {"configurable": {"thread_id": thread}}
    return {"state": snap(g.get_state(cfg)), "history": [snap(s) for s in g.get_state_history(cfg)],
            "task_names": names}


def scenario(saver):
    out = {}
    fg = flow(saver)
    fc = {"configurable": {"thread_id": "t-func"}}
    names = {}
    run(fg, {"n": 3}, fc, names)
    run(fg, Command(resume="yes"), fc, names)
    out["t-func"] = record(fg, "t-func", names)

    ug = upd.compile(checkpointer=saver)
    uc = {"configurable": {"thread_id": "t-update"}}
    names = {}
    run(ug, {"topic": "tables"}, uc, names)
    run(ug, Command(update={"topic": "rows", "notes": ["updated"]}), uc, names)
    out["t-update"] = record(ug, "t-update", names)

    pg = par.compile(checkpointer=saver)
    pc = {"configurable": {"thread_id": "t-parallel"}}
    names = {}
    try:
        run(pg, {"done": []}, pc, names)
    except ValueError as e:
        print("t-parallel raised:", e)
    out["t-parallel"] = record(pg, "t-parallel", names)
    return out


async def arun(g, inp, cfg, names):
    """run, through astream."""
    async for ev in g.astream(inp, cfg, stream_mode="tasks"):
        if "input" in ev:
            names[ev["id"]] = ev["name"]


async def arecord(g, thread, names):
    cfg = {"configurable": {"thread_id": thread}}
    return {"state": snap(await g.aget_state(cfg)),
            "history": [snap(s) async for s in g.aget_state_history(cfg)], "task_names": names}


async def ascenario(saver):
    """scenario, through LangGraph's async API."""
    out = {}
    fg = flow(saver)
    fc = {"configurable": {"thread_id": "t-func"}}
    names = {}
    await arun(fg, {"n": 3}, fc, names)
    await arun(fg, Command(resume="yes"), fc, names)
    out["t-func"] = await arecord(fg, "t-func", names)

    ug = upd.compile(checkpointer=saver)
    uc = {"configurable": {"thread_id": "t-update"}}
    names = {}
    await arun(ug, {"topic": "tables"}, uc, names)
    await arun(ug, Command(update={"topic": "rows", "notes": ["updated"]}), uc, names)
    out["t-update"] = await arecord(ug, "t-update", names)

    pg = par.compile(checkpointer=saver)
    pc = {"configurable": {"thread_id": "t-parallel"}}
    names = {}
    try:
        await arun(pg, {"done": []}, pc, names)
    except ValueError as e:
        print("t-parallel raised:", e)
    out["t-parallel"] = await arecord(pg, "t-parallel", names)
    return out


async def amain(db):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    async with AsyncSqliteSaver.from_conn_string(db) as saver:
        return await ascenario(saver)


# t-bigint: integers at msgpack's ends (uint64's top, int64's bottom) and past
# a float64's exact ones. 2**70+1 LangGraph refuses to store (ormsgpack:
# "Integer exceeds 64-bit range", MsgpackEncodeError) unless pickle_fallback.
class BigState(TypedDict, total=False):
    big: int
    neg: int
    top: int
    all: list[int]


big = StateGraph(BigState)
big.add_node("grow", lambda s: {"big": 2**63, "neg": -(2**63), "top": 2**64 - 1,
                                "all": [2**53 + 1, 2**63 - 1, -(2**53) - 1]})
big.add_edge(START, "grow")
big.add_edge("grow", END)


# t-nan: run metadata holding NaN and the infinities (SqliteSaver writes
# metadata with json.dumps, which writes them bare), and a NaN in the state.
class NanState(TypedDict, total=False):
    x: float


nan = StateGraph(NanState)
nan.add_node("set", lambda s: {"x": float("nan")})
nan.add_edge(START, "set")
nan.add_edge("set", END)


# t-pickle: JsonPlusSerializer(pickle_fallback=True): what msgpack cannot
# encode (an integer past 64 bits, an instance of a plain class) is pickled,
# the write alone, the checkpoint holding it whole.
class Plain:
    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return f"Plain({self.n})"


class PickleState(TypedDict, total=False):
    note: str
    big: int
    obj: object


pick = StateGraph(PickleState)
pick.add_node("first", lambda s: {"note": "plain"})
pick.add_node("second", lambda s: {"big": 2**70 + 1, "obj": Plain(3)})
pick.add_edge(START, "first")
pick.add_edge("first", "second")
pick.add_edge("second", END)


def values_scenario(saver, pickling=None, nan_metadata=True):
    out = {}
    if pickling is not None:
        pg = pick.compile(checkpointer=pickling)
        names = {}
        run(pg, {"note": "start"}, {"configurable": {"thread_id": "t-pickle"}}, names)
        out["t-pickle"] = record(pg, "t-pickle", names)

    bg = big.compile(checkpointer=saver)
    names = {}
    run(bg, {"big": 1}, {"configurable": {"thread_id": "t-bigint"}}, names)
    out["t-bigint"] = record(bg, "t-bigint", names)

    if not nan_metadata:  # PostgresSaver: jsonb refuses NaN ("Token "NaN" is invalid")
        return out
    ng = nan.compile(checkpointer=saver)
    names = {}
    run(ng, {"x": 1.5}, {"configurable": {"thread_id": "t-nan"},
                         "metadata": {"score": float("nan"), "hi": float("inf"), "lo": float("-inf")}}, names)
    out["t-nan"] = record(ng, "t-nan", names)
    return out


def encrypted_scenario(saver):
    out = {}
    ug = upd.compile(checkpointer=saver)
    uc = {"configurable": {"thread_id": "t-encrypted"}}
    names = {}
    run(ug, {"topic": "secrets"}, uc, names)
    run(ug, Command(resume="kept", update={"notes": ["sealed"]}), uc, names)
    out["t-encrypted"] = record(ug, "t-encrypted", names)
    return out


def encrypted_serde():
    """EncryptedSerializer.from_pycryptodome_aes(), over Debian's
    python3-pycryptodome, which names its package Cryptodome."""
    import Cryptodome, Cryptodome.Cipher, Cryptodome.Cipher.AES
    sys.modules.setdefault("Crypto", Cryptodome)
    sys.modules.setdefault("Crypto.Cipher", Cryptodome.Cipher)
    sys.modules.setdefault("Crypto.Cipher.AES", Cryptodome.Cipher.AES)
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
    return EncryptedSerializer.from_pycryptodome_aes()


NOTE = ('integers past 2**53 are {"$int": decimal}, NaN and the infinities '
        '{"$float": "NaN" | "Infinity" | "-Infinity"}: JSON holds neither exactly')

if __name__ == "__main__":
    if sys.argv[1] in ("--values", "--encrypted"):
        WITH_METADATA = True
        db, answers = sys.argv[2], sys.argv[3]
        if sys.argv[1] == "--encrypted":
            import sqlite3
            conn = sqlite3.connect(db, check_same_thread=False)
            threads = encrypted_scenario(SqliteSaver(conn, serde=encrypted_serde()))
            conn.close()
        else:
            from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
            with SqliteSaver.from_conn_string(db) as saver, SqliteSaver.from_conn_string(db) as pickling:
                pickling.serde = JsonPlusSerializer(pickle_fallback=True)
                threads = values_scenario(saver, pickling)
    elif sys.argv[1] in ("--postgres", "--postgres-values"):
        from langgraph.checkpoint.postgres import PostgresSaver
        WITH_METADATA = sys.argv[1] == "--postgres-values"
        db, answers = sys.argv[2], sys.argv[3]
        with PostgresSaver.from_conn_string(db) as saver:
            saver.setup()
            threads = values_scenario(saver, nan_metadata=False) if WITH_METADATA else scenario(saver)
    elif sys.argv[1] == "--async":
        db, answers = sys.argv[2], sys.argv[3]
        threads = asyncio.run(amain(db))
    else:
        db, answers = sys.argv[1], sys.argv[2]
        with SqliteSaver.from_conn_string(db) as saver:
            threads = scenario(saver)
    doc = {"note": NOTE, "threads": threads} if WITH_METADATA else {"threads": threads}
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    with open(answers, "wb") as f:
        f.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    for t, r in threads.items():
        print(t, len(r["history"]), "checkpoints, next", r["state"]["next"], "tasks", [(x["name"], x["error"]) for x in r["state"]["tasks"]])
