// Every user-visible string of the widget, in one table (English and Chinese).

import { contained, el } from "./dom";

const en = {
  agent: "Agent",
  agentCellMark: "agent",
  statusStarting: "starting",
  statusExited: "exited",
  phaseIdle: "idle",
  phaseThinking: "thinking",
  phaseResponding: "responding",
  phaseTool: "running a tool",
  phaseWaiting: "waiting for you",
  stopReason: "stopped: {reason}",
  connecting: "connecting…",
  // Why a chat runs in local mode (prompts and answers wait for a running cell).
  "local:no-variables":
    "Local mode: this kernel was not started by a Jupyter server with acp_notebook (or its variables were not passed on)",
  "local:unnamed": "Local mode: this kernel does not know its Jupyter kernel id",
  "local:refused": "Local mode: the Jupyter server refused this kernel's proof of identity",
  "local:unreachable": "Local mode: this kernel cannot reach the Jupyter server",
  usage: "ctx {used}/{size}",
  mode: "Mode",
  stop: "Stop",
  send: "Send",
  sendQueued: "Queue",
  sendQueuedTitle: "Sent when the running turn ends",
  composerPlaceholder: "Message the agent (Enter sends, Shift+Enter adds a line)",
  attachFailed: "Not attached: {detail}",
  tooManyAttachments: "At most {max} attachments per message",
  removeAttachment: "Remove {label}",
  noVariables: "No matching variable",
  noCommands: "No matching command",
  queueLabel: "Queued prompts",
  queueSteer: "Send now",
  queueEdit: "Edit",
  queueUp: "Move up",
  queueRemove: "Remove",
  queueDropped: "Stopped: the {count} queued prompt(s) were removed and put back in the composer.",
  queueDroppedExit: "The agent exited: the {count} queued prompt(s) were not sent.",
  thinking: "Thinking…",
  thoughtFor: "Thought for {seconds}s",
  thought: "Thought",
  toolPending: "pending",
  toolInProgress: "running",
  toolCompleted: "completed",
  toolFailed: "failed",
  kind_read: "read",
  kind_edit: "edit",
  kind_delete: "delete",
  kind_move: "move",
  kind_search: "search",
  kind_execute: "execute",
  kind_think: "think",
  kind_fetch: "fetch",
  kind_switch_mode: "switch mode",
  kind_other: "other",
  rawOutput: "Raw output",
  terminalCut: "{count} earlier characters not shown",
  terminalExitCode: "exit code {code}",
  terminalSignal: "ended by {signal}",
  terminalEnded: "ended",
  nbAction: "notebook",
  nbListVariables: "Read variables",
  nbInspectVariable: "Inspected {name}",
  nbReadCells: "Read cells",
  nbLastError: "Read the last error",
  nbRunCode: "Ran code",
  nbRunCodeAsk: "Run code in the kernel",
  newFile: "new file",
  largeDiff: "Show the diff ({lines} lines)",
  moreDiffLines: "… {lines} more lines not shown",
  terminal: "[terminal {id}]",
  permissionHeading: "{agent} asks for permission",
  editHeading: "{agent} wants to change the notebook",
  editInsert: "New {type} cell at {index}",
  editChange: "Changed cell {index}",
  editDelete: "Deleted cell {index}",
  editMove: "Moved cell from {from} to {to}",
  editWhere: "{path} · cell {index}",
  editWhereId: "{path} · cell {index} · id {id}",
  editSettled: "{edit}: {answer}",
  fileHeading: "{agent} wants to write a file",
  fileCreate: "New file {path}",
  fileWrite: "Changed file {path}",
  fileWhere: "{path} · {where}",
  acceptEdits: "Accept edits",
  acceptEditsHint: "Apply the agent's notebook edits without asking",
  shareChat: "Let anyone answer",
  shareChatHint:
    "Let everyone who can open this notebook answer, prompt and stop this chat, not only you",
  onlyOwnerAnswers:
    "Only {owner} can answer this. They can let others answer: “Let anyone answer” in the chat's header.",
  onlyOwnerPrompts: "Only {owner} can prompt or stop this chat, unless they share it.",
  allowed: "Allowed: {option}",
  rejected: "Rejected: {option}",
  cancelled: "Cancelled",
  timedOut: "Timed out",
  answeredBy: "{answer} (by {who})",
  questionHeading: "{agent} asks",
  askedFrom: "From {tool}",
  answer: "Answer",
  decline: "Decline",
  cancel: "Cancel",
  other: "Other",
  // A URL question: the page the agent asks the user to open (never loaded before a click).
  linkHost: "Opens a page on {host}",
  openLink: "Open {host}",
  openLinkAgain: "Open {host} again",
  linkWaiting: "Waiting for {agent} to say the sign-in is done…",
  linkRefused: "This link is not opened here: {why}",
  required: "required",
  timeLeft: "{time} left",
  plan: "Plan",
  planSummary: "completed {done} · pending {pending}",
  planCompleted: "completed",
  planInProgress: "in progress",
  planPending: "pending",
  failed: "Failed: {reason}",
  err_INVALID: "the request was invalid",
  err_CHAT_NOT_FOUND: "this chat no longer exists",
  err_ELICITATION_NOT_FOUND: "this question is no longer open",
  err_PERMISSION_NOT_FOUND: "this request is no longer open",
  err_FORBIDDEN: "only the chat's owner can do this",
  err_BUSY: "the agent is busy",
  err_AGENT_EXITED: "the agent has exited",
  err_TOO_MANY_CHATS: "too many chats are open on this server: close one first",
  err_INTERNAL: "internal error",
  err_DISCONNECTED: "not connected",
  err_TIMEOUT: "no answer from the kernel or the server; try again",
  chatGone:
    "this chat ended with its Jupyter server or kernel; questions still open were cancelled",
  continueChat: "Continue",
  continueHint: "Start {agent} again on this notebook's kernel and load this conversation",
  continueUnavailable: "{agent} cannot continue an earlier session",
  continueNoKernel: "start this notebook's kernel to continue",
  continueBadSession: "this saved chat's session id is not valid: it cannot be continued",
  continuing: "starting {agent}…",
  continueConfirmTitle: "Continue this saved chat?",
  continueUntrusted:
    "This notebook is not trusted: its file chose what Continue starts. It will start:",
  continueAgent: "agent: {value}",
  continueDirectory: "directory: {value}",
  continueNotebookDirectory: "the notebook's directory",
  continueSession: "session: {value}",
  continueDefaultMode: "in the agent's default mode, on this notebook's kernel.",
  continueDeclined: "not continued",
  savedTranscript: "saved conversation",
  waitingForKernel: "waiting for the kernel…",
  // A saved chat this page cannot show (the output's text/html stands in when it has one).
  savedNotAChat: "This saved chat cannot be shown: its data is not a chat ({size})",
  savedVersion: "This saved chat cannot be shown: its format version is unknown ({size})",
  savedNoSnapshot: "This saved chat cannot be shown: it holds no transcript ({size})",
  savedBroken: "This saved chat cannot be shown: its transcript is damaged ({size})",
  savedNewer: "saved by a newer version: what this version knows of it is shown",
  savedSkippedOne: "1 item could not be shown",
  savedSkipped: "{count} items could not be shown",
  droppedItems:
    "{items} earlier items and {characters} characters of a long message are no longer kept",
  copy: "Copy",
  copied: "Copied",
  copyFailed: "Copy failed",
  insertCellBelow: "Insert cell below",
  noNotebook: "No active notebook",
  panelCaption: "Chats with agents about this notebook",
  panelTitle: "Agent chats",
  newChatAgent: "The agent a new chat starts with",
  openPanel: "Open the Agent panel",
  askSelected: "Ask the agent about the selected cells",
  askAgent: "Ask the agent",
  chat: "Chat",
  newChat: "New chat",
  panelNoNotebook: "Open a notebook to chat with an agent beside it.",
  panelNoKernel: "This notebook has no running kernel yet.",
  panelNoChats: "No chat on this notebook's kernel yet: start one.",
  chatTitle: "{agent}: {title}",
  chatOwnedBy: "{chat} · {owner}'s",
  errorIntro: "This Jupyter cell failed. Explain why and suggest a fix.",
  cellsIntro: "About these Jupyter cells:",
  tracebackLabel: "The traceback:",
  cut: "[… {count} characters cut …]",
};

export type StringKey = keyof typeof en;
export type Strings = Record<StringKey, string>;

const zh: Strings = {
  agent: "智能体",
  agentCellMark: "智能体",
  statusStarting: "启动中",
  statusExited: "已退出",
  phaseIdle: "空闲",
  phaseThinking: "思考中",
  phaseResponding: "回复中",
  phaseTool: "正在运行工具",
  phaseWaiting: "等待你的回复",
  stopReason: "已停止：{reason}",
  connecting: "连接中…",
  "local:no-variables":
    "本地模式：此内核不是由带有 acp_notebook 的 Jupyter 服务器启动的（或其变量未被传递）",
  "local:unnamed": "本地模式：此内核不知道自己的 Jupyter 内核 ID",
  "local:refused": "本地模式：Jupyter 服务器拒绝了此内核的身份证明",
  "local:unreachable": "本地模式：此内核无法连接到 Jupyter 服务器",
  usage: "ctx {used}/{size}",
  mode: "模式",
  stop: "停止",
  send: "发送",
  sendQueued: "排队",
  sendQueuedTitle: "当前轮次结束后发送",
  composerPlaceholder: "给智能体发消息（Enter 发送，Shift+Enter 换行）",
  attachFailed: "未附加：{detail}",
  tooManyAttachments: "每条消息最多 {max} 个附件",
  removeAttachment: "移除 {label}",
  noVariables: "没有匹配的变量",
  noCommands: "没有匹配的命令",
  queueLabel: "排队的提示",
  queueSteer: "立即发送",
  queueEdit: "编辑",
  queueUp: "上移",
  queueRemove: "移除",
  queueDropped: "已停止：{count} 条排队的提示已移除，并放回输入框。",
  queueDroppedExit: "智能体已退出：{count} 条排队的提示未发送。",
  thinking: "思考中…",
  thoughtFor: "思考了 {seconds} 秒",
  thought: "思考",
  toolPending: "等待中",
  toolInProgress: "运行中",
  toolCompleted: "已完成",
  toolFailed: "失败",
  kind_read: "读取",
  kind_edit: "编辑",
  kind_delete: "删除",
  kind_move: "移动",
  kind_search: "搜索",
  kind_execute: "执行",
  kind_think: "思考",
  kind_fetch: "获取",
  kind_switch_mode: "切换模式",
  kind_other: "其他",
  rawOutput: "原始输出",
  terminalCut: "前面 {count} 个字符未显示",
  terminalExitCode: "退出码 {code}",
  terminalSignal: "被 {signal} 结束",
  terminalEnded: "已结束",
  nbAction: "笔记本",
  nbListVariables: "读取了变量",
  nbInspectVariable: "查看了 {name}",
  nbReadCells: "读取了单元格",
  nbLastError: "读取了最近的错误",
  nbRunCode: "运行了代码",
  nbRunCodeAsk: "在内核中运行代码",
  newFile: "新文件",
  largeDiff: "显示差异（{lines} 行）",
  moreDiffLines: "… 另有 {lines} 行未显示",
  terminal: "[终端 {id}]",
  permissionHeading: "{agent} 请求权限",
  editHeading: "{agent} 想要修改笔记本",
  editInsert: "在 {index} 处新建 {type} 单元格",
  editChange: "修改单元格 {index}",
  editDelete: "删除单元格 {index}",
  editMove: "将单元格从 {from} 移到 {to}",
  editWhere: "{path} · 单元格 {index}",
  editWhereId: "{path} · 单元格 {index} · id {id}",
  editSettled: "{edit}：{answer}",
  fileHeading: "{agent} 想要写入文件",
  fileCreate: "新建文件 {path}",
  fileWrite: "修改文件 {path}",
  fileWhere: "{path} · {where}",
  acceptEdits: "自动接受修改",
  acceptEditsHint: "不再询问，直接应用智能体对笔记本的修改",
  shareChat: "允许任何人回答",
  shareChatHint: "让所有能打开此笔记本的人都可以回答、发送消息和停止此会话，而不只是你",
  onlyOwnerAnswers:
    "只有 {owner} 可以回答。{owner} 可在会话标题栏勾选“允许任何人回答”来让其他人回答。",
  onlyOwnerPrompts: "只有 {owner} 可以向此会话发送消息或停止它，除非其共享此会话。",
  allowed: "已允许：{option}",
  rejected: "已拒绝：{option}",
  cancelled: "已取消",
  timedOut: "已超时",
  answeredBy: "{answer}（{who}）",
  questionHeading: "{agent} 提问",
  askedFrom: "来自 {tool}",
  answer: "回答",
  decline: "拒绝",
  cancel: "取消",
  other: "其他",
  linkHost: "将打开 {host} 上的页面",
  openLink: "打开 {host}",
  openLinkAgain: "再次打开 {host}",
  linkWaiting: "等待 {agent} 确认登录完成…",
  linkRefused: "此链接不会在此打开：{why}",
  required: "必填",
  timeLeft: "剩余 {time}",
  plan: "计划",
  planSummary: "已完成 {done} · 待办 {pending}",
  planCompleted: "已完成",
  planInProgress: "进行中",
  planPending: "待办",
  failed: "失败：{reason}",
  err_INVALID: "请求无效",
  err_CHAT_NOT_FOUND: "该会话已不存在",
  err_ELICITATION_NOT_FOUND: "该问题已关闭",
  err_PERMISSION_NOT_FOUND: "该请求已关闭",
  err_FORBIDDEN: "只有会话所有者可以这样做",
  err_BUSY: "智能体正忙",
  err_AGENT_EXITED: "智能体已退出",
  err_TOO_MANY_CHATS: "此服务器上打开的对话过多：请先关闭一个",
  err_INTERNAL: "内部错误",
  err_DISCONNECTED: "未连接",
  err_TIMEOUT: "内核或服务器没有响应，请重试",
  chatGone: "该会话已随其 Jupyter 服务器或内核结束；未回答的问题已取消",
  continueChat: "继续",
  continueHint: "在此笔记本的内核上重新启动 {agent} 并载入这段对话",
  continueUnavailable: "{agent} 无法继续之前的会话",
  continueNoKernel: "请先启动此笔记本的内核再继续",
  continueBadSession: "此保存对话的会话 ID 无效，无法继续",
  continuing: "正在启动 {agent}…",
  continueConfirmTitle: "继续这段保存的对话？",
  continueUntrusted: "此笔记本不受信任：继续将启动的内容由其文件决定。将启动：",
  continueAgent: "智能体：{value}",
  continueDirectory: "目录：{value}",
  continueNotebookDirectory: "笔记本所在目录",
  continueSession: "会话：{value}",
  continueDefaultMode: "以智能体的默认模式，在此笔记本的内核上运行。",
  continueDeclined: "未继续",
  savedTranscript: "已保存的对话",
  waitingForKernel: "正在等待内核…",
  savedNotAChat: "无法显示此保存的对话：其数据不是对话（{size}）",
  savedVersion: "无法显示此保存的对话：格式版本未知（{size}）",
  savedNoSnapshot: "无法显示此保存的对话：其中没有对话记录（{size}）",
  savedBroken: "无法显示此保存的对话：对话记录已损坏（{size}）",
  savedNewer: "由较新版本保存：仅显示此版本能识别的内容",
  savedSkippedOne: "有 1 个条目无法显示",
  savedSkipped: "有 {count} 个条目无法显示",
  droppedItems: "较早的 {items} 个条目和一条长消息中的 {characters} 个字符已不再保留",
  copy: "复制",
  copied: "已复制",
  copyFailed: "复制失败",
  insertCellBelow: "在下方插入单元格",
  noNotebook: "没有活动的笔记本",
  panelCaption: "与智能体讨论这个笔记本",
  panelTitle: "智能体会话",
  newChatAgent: "新会话使用的智能体",
  openPanel: "打开智能体面板",
  askSelected: "就所选单元格询问智能体",
  askAgent: "询问智能体",
  chat: "会话",
  newChat: "新会话",
  panelNoNotebook: "打开一个笔记本，在旁边与智能体对话。",
  panelNoKernel: "这个笔记本还没有运行中的内核。",
  panelNoChats: "这个笔记本的内核还没有会话：新建一个。",
  chatTitle: "{agent}：{title}",
  chatOwnedBy: "{chat} · {owner} 的会话",
  errorIntro: "这个笔记本单元格运行失败。请解释原因并给出修复方法。",
  cellsIntro: "关于这些笔记本单元格：",
  tracebackLabel: "错误回溯：",
  cut: "[… 省略 {count} 个字符 …]",
};

export type Locale = "en" | "zh";
const TABLES: Record<Locale, Strings> = { en, zh };

/** A translator: `t(key, {name: value})` fills `{name}` placeholders. */
export type Translate = (key: StringKey, vars?: Record<string, string | number>) => string;

export function translator(locale: Locale): Translate {
  const table = TABLES[locale];
  return (key, vars) => {
    const text = table[key];
    if (vars === undefined) return text;
    return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
      name in vars ? String(vars[name]) : whole,
    );
  };
}

/** Whether `key` names a string (for keys built from agent-sent enums such as tool kinds). */
export function hasKey(key: string): key is StringKey {
  return Object.hasOwn(en, key);
}

/**
 * `text` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: inside a string of
 * ours (an error line, a tooltip), a right-to-left override in someone else's text
 * cannot reorder what follows it. In the DOM, `tIsolated` puts it in a <bdi> instead.
 */
export function isolate(text: string): string {
  return `\u2068${contained(text)}\u2069`;
}

/**
 * `t(key, vars)` as DOM, each text value in a <bdi> of its own (values are others' text);
 * a node value (a part built the same way) goes in as it is.
 */
export function tIsolated(
  t: Translate,
  key: StringKey,
  vars: Record<string, string | number | Node>,
): DocumentFragment {
  // Placeholders become marks no translation contains; the values go in afterwards.
  const marks = Object.fromEntries(Object.keys(vars).map((name) => [name, `\u0000${name}\u0000`]));
  const fragment = document.createDocumentFragment();
  t(key, marks)
    .split("\u0000")
    .forEach((part, i) => {
      const value = i % 2 === 1 ? (vars[part] ?? "") : null;
      if (value instanceof Node) fragment.append(value);
      else if (value !== null) fragment.append(el("bdi", undefined, contained(String(value))));
      else if (part !== "") fragment.append(part);
    });
  return fragment;
}

/** The text of a failed request: the localized code, plus the server's detail if any. */
export function describeError(t: Translate, code: string, detail?: string | null): string {
  const key = `err_${code}`;
  const reason = hasKey(key) ? t(key) : isolate(code);
  return t("failed", { reason: detail ? `${reason} (${isolate(detail)})` : reason });
}

/**
 * The widget's locale: the `locale` trait when set, else JupyterLab's language
 * (it sets <html lang>), else the browser's.
 */
export function resolveLocale(trait: string): Locale {
  const candidates = [trait, document.documentElement.lang, navigator.language];
  const chosen = candidates.find((c) => c !== undefined && c !== "") ?? "en";
  return chosen.toLowerCase().startsWith("zh") ? "zh" : "en";
}
