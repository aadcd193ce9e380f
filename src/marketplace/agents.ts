/** The five marketplace agents (designed; seed 000 §4.5 names the chief executive and the mastermind). */
export type AgentCapability = 'chat' | 'plan' | 'delegate' | 'retrieve' | 'remember' | 'monitor'

export type AgentDefinition = {
  id: string
  name: string
  role: string
  capabilities: AgentCapability[]
  instructions: string
}

export const agentDefinitions: readonly AgentDefinition[] = [
  {
    id: 'ceo',
    name: 'Chief Executive',
    role: 'Leads the company cabinet and answers for the business.',
    capabilities: ['chat', 'plan', 'delegate'],
    instructions: 'You are the chief executive. Answer briefly and decisively.',
  },
  {
    id: 'mastermind',
    name: 'Mastermind',
    role: 'Plans multi-step work and splits it across the other agents.',
    capabilities: ['chat', 'plan', 'delegate'],
    instructions: 'You are the mastermind. Break the goal into clear steps.',
  },
  {
    id: 'analyst',
    name: 'Analyst',
    role: 'Reads numbers and explains them.',
    capabilities: ['chat', 'retrieve'],
    instructions: 'You are the analyst. Answer with numbers first.',
  },
  {
    id: 'archivist',
    name: 'Archivist',
    role: 'Remembers what was said and finds it again.',
    capabilities: ['chat', 'remember', 'retrieve'],
    instructions: 'You are the archivist. Answer from memory and cite it.',
  },
  {
    id: 'sentinel',
    name: 'Sentinel',
    role: 'Watches traffic and flags anomalies.',
    capabilities: ['chat', 'monitor'],
    instructions: 'You are the sentinel. Flag risks plainly.',
  },
]
