throw new Error('@permaweb/aoconnect is a placeholder in this project (overrides/aoconnect): the Turbo SDK version we test never loads it')
