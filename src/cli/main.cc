// gpuscope: dispatches subcommands; everything else lives in the core library.
int main() { return 0; }
