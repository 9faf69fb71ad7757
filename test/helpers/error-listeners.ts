import path from 'node:path'
import ts from 'typescript'

// Finds the calls in a source file that create an object emitting 'error' (a child process, a socket, a server, a
// stream, a client of a database or of Redis, a worker pool) whose 'error' has no listener: Node throws an 'error'
// event no one listens to, and a failed connection or a dead child then ends the whole process.

/** The creating calls, by module and member; `new` or a call alike. */
const CREATORS: Record<string, string[]> = {
  child_process: ['spawn', 'fork', 'exec', 'execFile'],
  cluster: ['fork'],
  net: ['connect', 'createConnection', 'createServer', 'Socket', 'Server'],
  tls: ['connect', 'createServer', 'TLSSocket', 'Server'],
  dgram: ['createSocket', 'Socket'],
  http: ['request', 'get', 'createServer', 'Server'],
  https: ['request', 'get', 'createServer', 'Server'],
  http2: ['connect', 'createServer', 'createSecureServer'],
  fs: ['createReadStream', 'createWriteStream', 'watch'],
  worker_threads: ['Worker'],
  ws: ['WebSocket', 'WebSocketServer', 'default'],
  pg: ['Client', 'Pool'],
  ioredis: ['Redis', 'Cluster', 'default'],
  piscina: ['Piscina', 'default'],
  nodemailer: ['createTransport'],
  pino: ['destination', 'transport'],
  '': ['WebSocket'],
}

/** A call given a function argument hands the error to it (the callback's first argument), without an 'error' event. */
const CALLBACK_TAKES_ERROR = new Set(['child_process.exec', 'child_process.execFile'])

/**
 * Creators whose callback gets another emitter as its first argument: a raw server's connection socket (an http(s)
 * server listens to its sockets itself), a request's response. It is held to the same rule, inside the callback or
 * in the function of the file the callback hands it to (`(socket) => this.serveTcp(socket)`).
 */
const CALLBACK_EMITTER: Record<string, string> = {
  'net.createServer': 'the connection socket',
  'tls.createServer': 'the connection socket',
  'http.request': 'the response',
  'http.get': 'the response',
  'https.request': 'the response',
  'https.get': 'the response',
}

/** Methods that add a listener: one of them with 'error' as its first argument is what the rule asks for. */
const LISTEN = new Set(['on', 'once', 'addListener', 'prependListener', 'prependOnceListener'])

/** Methods that answer the object they are called on, so a chain `create().on('x', …).on('error', …)` goes on. */
const CHAINABLE = new Set([...LISTEN, 'setTimeout', 'setNoDelay', 'setKeepAlive', 'setEncoding', 'ref', 'unref'])

/**
 * Functions that take the errors of the object handed to them: stream.pipeline and finished (a listener of their own,
 * the error reaches their callback or promise) and events.once / events.on (the promise rejects, the iterator throws).
 */
const TAKERS: Record<string, string[]> = {
  stream: ['pipeline', 'finished'],
  'stream/promises': ['pipeline', 'finished'],
  events: ['once', 'on'],
}

/** The comment that says why a site needs no listener where it is: `// error-listener: <a reason>`. */
export const MARK = /\/\/\s*error-listener:\s*(\S.{9,})/

export interface Offence {
  line: number
  what: string
  why: string
}

type Binding = { module: string; member?: string; loader?: boolean }

const moduleName = (spec: string) => spec.replace(/^node:/, '')

/**
 * The names a file binds to modules: imports (`import http from 'node:http'`, `import { spawn } from …`), a lazily
 * required module (`const pg = lazyRequire<…>('pg')`, called as `pg()`), and `loaders`, functions of other files
 * that answer a module (`loadPg(): typeof pg`).
 */
function bindingsOf(file: ts.SourceFile, loaders: Map<string, string>, fileName: string): Map<string, Binding> {
  const out = new Map<string, Binding>()
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text
      const clause = node.importClause
      const relative = spec.startsWith('.')
      const target = relative ? path.resolve(path.dirname(fileName), spec.replace(/\.js$/, '.ts')) : ''
      if (clause?.name && !relative) out.set(clause.name.text, { module: moduleName(spec) })
      const named = clause?.namedBindings
      if (named && ts.isNamespaceImport(named) && !relative) out.set(named.name.text, { module: moduleName(spec) })
      if (named && ts.isNamedImports(named))
        for (const el of named.elements) {
          const imported = (el.propertyName ?? el.name).text
          if (!relative) out.set(el.name.text, { module: moduleName(spec), member: imported })
          else {
            const loaded = loaders.get(`${target}#${imported}`)
            if (loaded) out.set(el.name.text, { module: loaded, loader: true })
          }
        }
    }
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const lazy = lazyModule(node.initializer)
      if (lazy) out.set(node.name.text, { module: lazy, loader: true })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  for (const [name, module] of loaders) {
    const [inFile, fn] = name.split('#')
    if (inFile === fileName && fn) out.set(fn, { module, loader: true })
  }
  return out
}

/** `lazyRequire<…>('m')`: the module m. */
function lazyModule(init: ts.Expression): string | null {
  if (ts.isCallExpression(init) && ts.isIdentifier(init.expression) && init.expression.text === 'lazyRequire') {
    const arg = init.arguments[0]
    if (arg && ts.isStringLiteral(arg)) return moduleName(arg.text)
  }
  return null
}

/** Functions of a file that answer a module, `function loadPg(): typeof pg`, keyed `<file>#<name>`. */
export function loadersOf(fileName: string, text: string): Map<string, string> {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const imports = bindingsOf(file, new Map(), fileName)
  const out = new Map<string, string>()
  for (const st of file.statements) {
    if (ts.isFunctionDeclaration(st) && st.name && st.type && ts.isTypeQueryNode(st.type)) {
      const bound = ts.isIdentifier(st.type.exprName) ? imports.get(st.type.exprName.text) : undefined
      if (bound && !bound.member) out.set(`${fileName}#${st.name.text}`, bound.module)
    }
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations) {
        const lazy = d.initializer && lazyModule(d.initializer)
        if (lazy && ts.isIdentifier(d.name)) out.set(`${fileName}#${d.name.text}`, lazy)
      }
  }
  return out
}

const strip = (e: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isSatisfiesExpression(e)
    ? strip(e.expression)
    : e

/** The module an expression stands for: a bound name, or a loader's call. */
function moduleOf(e: ts.Expression, bindings: Map<string, Binding>): string | null {
  const x = strip(e)
  if (ts.isIdentifier(x)) {
    const b = bindings.get(x.text)
    return b && !b.member && !b.loader ? b.module : null
  }
  if (ts.isCallExpression(x) && ts.isIdentifier(x.expression) && x.arguments.length === 0) {
    const b = bindings.get(x.expression.text)
    return b?.loader ? b.module : null
  }
  // `(secure ? https : http).request(…)`: both sides the same kind of module.
  if (ts.isConditionalExpression(x)) {
    const a = moduleOf(x.whenTrue, bindings)
    const b = moduleOf(x.whenFalse, bindings)
    return a && b && CREATORS[a] && CREATORS[b] ? a : null
  }
  return null
}

/** `module.member` for the callee of a call or `new`, or null when it is not one of the creators. */
function creatorOf(callee: ts.Expression, bindings: Map<string, Binding>): string | null {
  const c = strip(callee)
  let module: string | null = null
  let member: string | null = null
  if (ts.isIdentifier(c)) {
    const b = bindings.get(c.text)
    if (b?.member) [module, member] = [b.module, b.member]
    else if (b && !b.loader) [module, member] = [b.module, 'default']
    else if (!b) [module, member] = ['', c.text]
  } else if (ts.isPropertyAccessExpression(c)) {
    module = moduleOf(c.expression, bindings)
    member = c.name.text
  } else if (ts.isCallExpression(c)) {
    // `new (piscina())(…)`: a loader's module itself.
    module = moduleOf(c, bindings)
    member = 'default'
  }
  if (module === null || member === null) return null
  return CREATORS[module]?.includes(member) ? (module ? `${module}.${member}` : member) : null
}

/** The text an object is held by (`x`, `this.pool`), or why it is not held where a listener could be added. */
function holderOf(created: ts.Expression): { holder: ts.Node } | { listened: true } | { lost: string } {
  let node: ts.Node = created
  for (;;) {
    const p = node.parent
    if (
      ts.isParenthesizedExpression(p) ||
      ts.isAsExpression(p) ||
      ts.isNonNullExpression(p) ||
      ts.isSatisfiesExpression(p) ||
      (ts.isConditionalExpression(p) && p.condition !== node) ||
      (ts.isBinaryExpression(p) &&
        p.right === node &&
        [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(p.operatorToken.kind))
    ) {
      node = p
      continue
    }
    if (ts.isPropertyAccessExpression(p) && p.expression === node && ts.isCallExpression(p.parent)) {
      const method = p.name.text
      if (isErrorListen(p.parent)) return { listened: true }
      if (CHAINABLE.has(method)) {
        node = p.parent
        continue
      }
      return { lost: `.${method}() is called on it and no 'error' listener` }
    }
    if (ts.isVariableDeclaration(p) && p.initializer === node && ts.isIdentifier(p.name)) return { holder: p.name }
    if (
      ts.isBinaryExpression(p) &&
      p.right === node &&
      [ts.SyntaxKind.EqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken].includes(p.operatorToken.kind)
    )
      return { holder: p.left }
    if (ts.isReturnStatement(p) || (ts.isArrowFunction(p) && p.body === node))
      return { lost: 'it is returned: listen where it is created, or mark it' }
    if (ts.isCallExpression(p) || ts.isNewExpression(p)) return { holder: node }
    return { lost: 'it is not held, so nothing can listen to it' }
  }
}

/** `x.on('error', …)` and the like; `x` is the text of the object listened to. */
function isErrorListen(call: ts.CallExpression): boolean {
  const callee = call.expression
  const first = call.arguments[0]
  return (
    ts.isPropertyAccessExpression(callee) &&
    LISTEN.has(callee.name.text) &&
    first !== undefined &&
    ts.isStringLiteralLike(first) &&
    first.text === 'error'
  )
}

const text = (n: ts.Node) => {
  const e = ts.isExpression(n) ? strip(n) : n
  return e.getText().replace(/\?\./g, '.')
}

/** Whether a node in `scope` listens for the holder's 'error', or hands the holder to a taker. */
function listenedIn(scope: ts.Node, holder: string, bindings: Map<string, Binding>, site: ts.Node): boolean {
  let found = false
  const visit = (n: ts.Node) => {
    if (found) return
    if (ts.isCallExpression(n)) {
      const callee = n.expression
      if (isErrorListen(n) && ts.isPropertyAccessExpression(callee) && text(callee.expression) === holder) found = true
      else if (isTaker(callee, bindings) && n.arguments.some((a) => text(a) === holder || a === site)) found = true
    }
    ts.forEachChild(n, visit)
  }
  visit(scope)
  return found
}

function isTaker(callee: ts.Expression, bindings: Map<string, Binding>): boolean {
  const c = strip(callee)
  if (ts.isIdentifier(c)) {
    const b = bindings.get(c.text)
    return !!b?.member && !!TAKERS[b.module]?.includes(b.member)
  }
  if (ts.isPropertyAccessExpression(c)) {
    const m = moduleOf(c.expression, bindings)
    return m !== null && !!TAKERS[m]?.includes(c.name.text)
  }
  return false
}

/** The function a node is in (the class, for `this.x`), or the file. */
function scopeOf(node: ts.Node, holder: string): ts.Node {
  const wantClass = holder.startsWith('this.')
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (wantClass && (ts.isClassDeclaration(n) || ts.isClassExpression(n))) return n
    if (!wantClass && ts.isFunctionLike(n)) {
      // A name declared further out (`let req` before a callback that assigns it) is listened to out there.
      if (declares(n, holder)) return n
    }
  }
  return node.getSourceFile()
}

function declares(fn: ts.Node, name: string): boolean {
  let found = false
  const visit = (n: ts.Node) => {
    if (found) return
    if ((ts.isVariableDeclaration(n) || ts.isParameter(n)) && ts.isIdentifier(n.name) && n.name.text === name)
      found = true
    else ts.forEachChild(n, visit)
  }
  visit(fn)
  return found
}

/** The statement a node is part of, and the comment lines just above it and on its own lines up to the node. */
function marked(node: ts.Node, source: ts.SourceFile): boolean {
  let st: ts.Node = node
  while (st.parent && !ts.isBlock(st.parent) && !ts.isSourceFile(st.parent) && !ts.isClassElement(st)) st = st.parent
  const lines = source.text.split('\n')
  const first = source.getLineAndCharacterOfPosition(st.getStart(source)).line
  const last = source.getLineAndCharacterOfPosition(node.getStart(source)).line
  for (let i = first; i <= last; i++) if (MARK.test(lines[i] ?? '')) return true
  for (let i = first - 1; i >= 0 && /^\s*\/\//.test(lines[i] ?? ''); i--) if (MARK.test(lines[i] ?? '')) return true
  return false
}

/** The offending sites of one source file. */
export function errorListenerOffences(
  fileName: string,
  source: string,
  loaders = new Map<string, string>(),
): Offence[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true)
  const bindings = bindingsOf(file, loaders, fileName)
  const out: Offence[] = []
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const what = creatorOf(n.expression, bindings)
      const callback = n.arguments?.some((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a))
      if (what && !(CALLBACK_TAKES_ERROR.has(what) && callback) && !marked(n, file)) {
        const line = file.getLineAndCharacterOfPosition(n.getStart(file)).line + 1
        const why = whyUnlistened(n, bindings)
        if (why) out.push({ line, what, why })
        const passed = CALLBACK_EMITTER[what]
        const why2 = passed && callbackUnlistened(n.arguments ?? [], file, bindings)
        if (why2) out.push({ line, what, why: `${passed} ${why2}` })
      }
    }
    ts.forEachChild(n, visit)
  }
  visit(file)
  return out
}

function whyUnlistened(site: ts.Expression, bindings: Map<string, Binding>): string | null {
  const held = holderOf(site)
  if ('listened' in held) return null
  if ('lost' in held) return held.lost
  const holder = text(held.holder)
  if (ts.isCallExpression(held.holder.parent) || ts.isNewExpression(held.holder.parent)) {
    const call = held.holder.parent
    return isTaker(call.expression, bindings)
      ? null
      : `it is handed to ${call.expression.getText()}() that is not known to take its errors`
  }
  return listenedIn(scopeOf(site, holder), holder, bindings, site) ? null : `${holder} gets no 'error' listener`
}

/** Why the emitter a creator's callback gets (its first parameter) is not listened to, or null. */
function callbackUnlistened(
  args: readonly ts.Expression[],
  file: ts.SourceFile,
  bindings: Map<string, Binding>,
): string | null {
  const fn = args.find((a) => ts.isArrowFunction(a) || ts.isFunctionExpression(a)) as
    | ts.FunctionLikeDeclaration
    | undefined
  const param = fn?.parameters[0]
  if (!fn || !param) return null
  if (!ts.isIdentifier(param.name)) return 'is not named, so nothing can listen to it'
  const name = param.name.text
  if (listenedIn(fn, name, bindings, param)) return null
  // Handed to a function or method of this file: that function's parameter at the same place is held to the rule.
  let handedOn = false
  const visit = (n: ts.Node) => {
    if (handedOn) return
    if (ts.isCallExpression(n)) {
      const at = n.arguments.findIndex((a) => ts.isIdentifier(a) && a.text === name)
      const callee = strip(n.expression)
      const calleeName = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : null
      const target = at >= 0 && calleeName ? functionNamed(file, calleeName) : undefined
      const p = target?.parameters[at]
      if (target && p && ts.isIdentifier(p.name) && listenedIn(target, p.name.text, bindings, p)) handedOn = true
    }
    ts.forEachChild(n, visit)
  }
  visit(fn)
  return handedOn ? null : "gets no 'error' listener"
}

/** The function declaration or method of `file` named `name`. */
function functionNamed(file: ts.SourceFile, name: string): ts.FunctionLikeDeclaration | undefined {
  let found: ts.FunctionLikeDeclaration | undefined
  const visit = (n: ts.Node) => {
    if (found) return
    if (
      (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) &&
      n.name &&
      ts.isIdentifier(n.name) &&
      n.name.text === name &&
      n.body
    )
      found = n
    else ts.forEachChild(n, visit)
  }
  visit(file)
  return found
}
