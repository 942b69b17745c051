import { Activity } from './Activity.js';
import { Backup } from './Backup.js';
import { ApiToken } from './ApiToken.js';
import { Blueprint } from './Blueprint.js';
import { Node } from './Node.js';
import { NodeNonce } from './NodeNonce.js';
import { NodeNotice } from './NodeNotice.js';
import { Plant } from './Plant.js';
import { Schedule } from './Schedule.js';
import { ScheduleRun } from './ScheduleRun.js';
import { Server } from './Server.js';
import { Session } from './Session.js';
import { Subuser } from './Subuser.js';
import { User } from './User.js';

export { Activity, Backup, ApiToken, Blueprint, Node, NodeNonce, NodeNotice, Plant, Schedule, ScheduleRun, Server, Session, Subuser, User };
export const ENTITIES = [User, Session, ApiToken, Node, Blueprint, Server, Plant, Subuser, Activity, Backup, Schedule, ScheduleRun, NodeNonce, NodeNotice];
