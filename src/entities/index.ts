import { ApiToken } from './ApiToken.js';
import { Blueprint } from './Blueprint.js';
import { Node } from './Node.js';
import { Plant } from './Plant.js';
import { Server } from './Server.js';
import { Session } from './Session.js';
import { User } from './User.js';

export { ApiToken, Blueprint, Node, Plant, Server, Session, User };
export const ENTITIES = [User, Session, ApiToken, Node, Blueprint, Server, Plant];
