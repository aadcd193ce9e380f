/**
 * The Jinja chat template written into the tiny chat model (`tokenizer.chat_template`): ChatML turns,
 * optional tool definitions in the system turn with calls wrapped in `<tool_call>` tags (the
 * Hermes/Qwen convention, which node-llama-cpp and Ollama both recognise), tool results in
 * `<tool_response>` tags, and an optional `<think>` section.
 *
 * Whitespace matters: the Jinja tags below never strip a newline that belongs to the rendered prompt.
 */
export type ChatTemplateOptions = {
  tools: boolean
  thinking: boolean
  /** A system line `Reasoning: <level>` when the renderer passes `reasoning_effort` (gpt-oss's convention). */
  thinkLevels?: boolean
}

export function buildChatTemplate(options: ChatTemplateOptions): string {
  const t: string[] = []
  if (options.thinking && options.thinkLevels) {
    t.push('{% if reasoning_effort is defined %}<|im_start|>system\nReasoning: {{ reasoning_effort }}<|im_end|>\n{% endif %}')
  }
  const systemTurn = "{% if messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n{% endif %}"
  if (options.tools) {
    t.push(
      '{% if tools %}<|im_start|>system\n',
      "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}",
      '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n',
      'You are provided with function signatures within <tools></tools> XML tags:\n<tools>',
      "{% for tool in tools %}{{ '\\n' }}{{ tool | tojson }}{% endfor %}{{ '\\n' }}</tools>\n\n",
      'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n',
      '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n',
      '{% else %}',
      systemTurn,
      '{% endif %}',
    )
  } else {
    t.push(systemTurn)
  }
  t.push(
    '{% for message in messages %}',
    "{% if message.role == 'user' or (message.role == 'system' and not loop.first) %}",
    '<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n',
    "{% elif message.role == 'assistant' %}",
    '<|im_start|>assistant\n',
  )
  if (options.thinking) {
    t.push('{% if message.reasoning_content %}<think>\n{{ message.reasoning_content }}\n</think>\n\n{% endif %}')
  }
  t.push('{{ message.content }}')
  if (options.tools) {
    t.push(
      '{% if message.tool_calls %}{% for tool_call in message.tool_calls %}',
      '{% if tool_call.function is defined %}{% set tool_call = tool_call.function %}{% endif %}',
      "{% if not loop.first or message.content %}{{ '\\n' }}{% endif %}",
      '<tool_call>\n{"name": "{{ tool_call.name }}", "arguments": {{ tool_call.arguments | tojson }}}\n</tool_call>',
      '{% endfor %}{% endif %}',
    )
  }
  t.push('<|im_end|>\n')
  if (options.tools) {
    t.push(
      "{% elif message.role == 'tool' %}",
      "{% if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}{{ '\\n' }}<tool_response>\n{{ message.content }}\n</tool_response>",
      "{% if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>{{ '\\n' }}{% endif %}",
    )
  }
  t.push('{% endif %}{% endfor %}', '{% if add_generation_prompt %}<|im_start|>assistant\n')
  if (options.thinking) {
    t.push('{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}')
  }
  t.push('{% endif %}')
  return t.join('')
}
