// Throwaway LangGraph.js program (see README.md): three threads rewind's
// reader must show as LangGraph shows them, and LangGraph's own answer for
// every checkpoint of each, recorded beside the database.
//
//   node generate-cases.mjs sqlite OUT.db OUT.json.gz
//   node generate-cases.mjs postgres postgres://… OUT.json.gz
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import {
  StateGraph, StateSchema, MessagesDeltaValue, Annotation, START, END,
  entrypoint, task, interrupt, Command, messagesStateReducer,
} from "@langchain/langgraph";
import { HumanMessage, AIMessage, BaseMessage } from "@langchain/core/messages";

const DELTA_TURNS = 230; // MessagesDeltaValue snapshots every 100 updates: crosses two

// t-delta: a DeltaChannel conversation (MessagesDeltaValue), one AI message a
// superstep, then a second human turn and an updateState.
const DeltaState = new StateSchema({ messages: MessagesDeltaValue });
const deltaGraph = new StateGraph(DeltaState)
  .addNode("agent", (s) => ({ messages: [new AIMessage({ content: `reply ${s.messages.length}`, id: `ai-${s.messages.length}` })] }))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", (s) => (s.messages.length % 120 === 0 || s.messages.length >= DELTA_TURNS ? END : "agent"), ["agent", END]);

// t-empty: reducer channels no node ever writes.
const EmptyState = Annotation.Root({
  messages: Annotation({ reducer: messagesStateReducer, default: () => [] }),
  notes: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  topic: Annotation(),
});
const emptyGraph = new StateGraph(EmptyState)
  .addNode("first", (s) => ({ topic: `${s.topic}!` }))
  .addNode("second", (s) => ({ topic: `${s.topic}?` }))
  .addEdge(START, "first").addEdge("first", "second").addEdge("second", END);

// t-func: the functional API, a task before and after an interrupt.
const double = task("double", async (x) => x * 2);
function flow(saver) {
  return entrypoint({ name: "flow", checkpointer: saver }, async (input) => {
    const a = await double(input.n);
    const ok = interrupt({ question: "keep going?", a });
    const b = await double(a);
    return { a, b, ok };
  });
}

// plain turns a value into JSON the Go test reads: a message as its type,
// id and content; everything else as itself.
function plain(v) {
  if (BaseMessage.isInstance(v)) return { $message: { type: v.getType(), id: v.id ?? null, content: v.content } };
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Date) return v.toISOString();
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v === undefined ? null : v;
}

function snap(s) {
  return {
    checkpoint_id: s.config.configurable.checkpoint_id,
    checkpoint_ns: s.config.configurable.checkpoint_ns ?? "",
    parent_id: s.parentConfig?.configurable?.checkpoint_id ?? null,
    values: plain(s.values),
    next: s.next,
    tasks: s.tasks.map((t) => ({ id: t.id, name: t.name, error: t.error ? String(t.error.message ?? t.error) : null, interrupts: plain((t.interrupts ?? []).map((i) => i.value)) })),
    source: s.metadata?.source ?? null,
    step: s.metadata?.step ?? null,
  };
}

async function record(g, thread) {
  const cfg = { configurable: { thread_id: thread } };
  const history = [];
  for await (const s of g.getStateHistory(cfg)) history.push(snap(s));
  return { state: snap(await g.getState(cfg)), history };
}

async function scenario(saver) {
  const out = {};
  const dg = deltaGraph.compile({ checkpointer: saver });
  const dc = { configurable: { thread_id: "t-delta" }, recursionLimit: 1000 };
  await dg.invoke({ messages: [new HumanMessage({ content: "hello", id: "h-1" })] }, dc);
  await dg.invoke({ messages: [new HumanMessage({ content: "go on", id: "h-2" })] }, dc);
  await dg.updateState(dc, { messages: [new HumanMessage({ content: "an edit", id: "h-edit" })] });
  out["t-delta"] = await record(dg, "t-delta");

  const eg = emptyGraph.compile({ checkpointer: saver });
  await eg.invoke({ topic: "quiet" }, { configurable: { thread_id: "t-empty" } });
  out["t-empty"] = await record(eg, "t-empty");

  const fg = flow(saver);
  const fc = { configurable: { thread_id: "t-func" } };
  await fg.invoke({ n: 3 }, fc);
  await fg.invoke(new Command({ resume: "yes" }), fc);
  out["t-func"] = await record(fg, "t-func");
  return out;
}

const [kind, where, json] = process.argv.slice(2);
let saver;
if (kind === "sqlite") {
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  saver = SqliteSaver.fromConnString(where);
} else {
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  saver = PostgresSaver.fromConnString(where);
  await saver.setup();
}
const threads = await scenario(saver);
if (kind !== "sqlite") await saver.end();
// Gzipped: the delta thread's history holds every message at every checkpoint.
const text = JSON.stringify({ threads }, null, 1) + "\n";
writeFileSync(json, json.endsWith(".gz") ? gzipSync(text, { level: 9 }) : text);
for (const [t, r] of Object.entries(threads)) console.log(t, r.history.length, "checkpoints, next", r.state.next);
