// agentpane's pi extension, written by `agentpane hooks install --agent pi` and removed by
// `agentpane hooks uninstall --agent pi`. pi keeps no file open and erases its own command
// line, so nothing else ties a pi process to its session log: on every session start (startup,
// /new, /resume, /fork, /reload) this writes {pid, sessionFile, cwd, reason, time} to
// <agentpane state dir>/pi/<pid>.json, replacing it atomically, and removes it when pi quits.
// It reads no conversation and runs nothing; an error here is ignored, never shown to pi.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

function recordDir(): string {
	const env = process.env;
	const state = env.AGENTPANE_STATE_DIR
		? env.AGENTPANE_STATE_DIR
		: env.XDG_STATE_HOME
			? path.join(env.XDG_STATE_HOME, "agentpane")
			: path.join(env.HOME || os.homedir(), ".local", "state", "agentpane");
	return path.join(state, "pi");
}

function recordFile(): string {
	return path.join(recordDir(), `${process.pid}.json`);
}

function record(sessionFile: string | undefined, cwd: string, reason: string): void {
	try {
		fs.mkdirSync(recordDir(), { recursive: true, mode: 0o700 });
		const file = recordFile();
		const tmp = `${file}.tmp`;
		const body = {
			pid: process.pid,
			sessionFile: sessionFile ?? null,
			cwd,
			reason,
			time: new Date().toISOString(),
		};
		fs.writeFileSync(tmp, JSON.stringify(body), { mode: 0o600 });
		fs.renameSync(tmp, file);
	} catch {
		// agentpane then reads this pane as it would without the extension.
	}
}

export default function agentpane(pi: any) {
	pi.on("session_start", (event: any, ctx: any) => {
		record(ctx?.sessionManager?.getSessionFile?.(), ctx?.cwd ?? process.cwd(), event?.reason ?? "startup");
	});
	pi.on("session_shutdown", (event: any) => {
		if (event?.reason !== "quit") return;
		try {
			fs.unlinkSync(recordFile());
		} catch {
			// Already gone.
		}
	});
}
