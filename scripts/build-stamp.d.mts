export declare const root: string
export declare const stampFile: string
export declare function builtAt(): number
export declare function newest(p: string): number
