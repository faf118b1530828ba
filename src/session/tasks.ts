/**
 * Tasks: a request sent with `params.task` is answered at once with `{task: {taskId, …}}`, and later requests
 * (`tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/update`) name that task by id. This remembers which request
 * created each task, so those can be linked to it. Pure state, bounded.
 */
import type { JsonRpcId } from '../types.js';
import { setBounded } from './recent-map.js';

/** Tasks remembered; past this the oldest is forgotten (its tasks/* requests are then named, not linked). */
export const MAX_TASKS = 1_000;

/** The request that created a task. */
export interface TaskOrigin {
  seq: number;
  id: JsonRpcId;
  method: string;
  tool?: string;
}

export class TaskOrigins {
  private readonly byId = new Map<string, TaskOrigin>();

  created(taskId: string, request: TaskOrigin): void {
    const origin: TaskOrigin = { seq: request.seq, id: request.id, method: request.method };
    if (request.tool !== undefined) origin.tool = request.tool;
    setBounded(this.byId, taskId, origin, MAX_TASKS);
  }

  origin(taskId: string): TaskOrigin | undefined {
    return this.byId.get(taskId);
  }
}
